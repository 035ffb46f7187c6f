/**
 * @module models/import/espeak-voice
 * Whether an eSpeak NG voice (a Piper voice's `espeak.voice`, a model's
 * `voice` metadata: `en-us`, `de`, `cmn`) exists in an `espeak-ng-data`
 * folder: its language files under `lang/`, matched without regard to case
 * as eSpeak NG matches them. A voice that does not exist would have the
 * model speak every word through the wrong phoneme set.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const known = new Map<string, Set<string>>();

function voicesIn(dataDir: string): Set<string> {
  const hit = known.get(dataDir);
  if (hit) return hit;
  const names = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else names.add(entry.name.toLowerCase());
    }
  };
  try {
    walk(join(dataDir, 'lang'));
  } catch {
    // no lang/ folder: no voice exists
  }
  known.set(dataDir, names);
  return names;
}

export function espeakVoiceExists(dataDir: string, voice: string): boolean {
  return voicesIn(dataDir).has(voice.toLowerCase());
}
