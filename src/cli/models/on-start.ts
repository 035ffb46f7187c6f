/**
 * @module cli/models/on-start
 * Installs the models of `pull` (`VOICEGATE_PULL`) that are not installed
 * yet, before the server starts its engines: so one `docker run` with a
 * volume serves a neural voice, downloading once and resuming a download a
 * restart cut. Progress goes to the log.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { modelDir, parsePullSpec } from '../../config/pull.js';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../log/logger.js';
import { LogProgress } from './progress.js';
import { pullModel } from './pull.js';

export async function pullOnStart(config: Config, logger: Logger): Promise<void> {
  for (const entry of config.pull) {
    const spec = parsePullSpec(entry);
    if (typeof spec === 'string') throw new Error(spec); // loadConfig has refused these already
    const dir = modelDir(config.dataDir, spec.name);
    if (existsSync(dir)) {
      logger.info({ model: spec.name, dir: resolve(dir) }, 'model installed');
      continue;
    }
    logger.info({ model: spec.name, from: spec.from }, 'installing model');
    const started = performance.now();
    const installed = await pullModel({
      dataDir: config.dataDir,
      name: spec.name,
      from: spec.from,
      force: false,
      progress: () => new LogProgress(logger, spec.name),
      say: (line) => logger.info({ model: spec.name }, line),
    });
    logger.info(
      { model: spec.name, dir: installed.dir, family: installed.layout.family, sampleRate: installed.sampleRate, speakers: installed.numSpeakers, seconds: Math.round((performance.now() - started) / 100) / 10 },
      'model installed and verified',
    );
  }
}
