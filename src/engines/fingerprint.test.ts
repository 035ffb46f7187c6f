import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { packageVersion, pathsDigest } from './fingerprint.js';

test("a model file swapped, added or renamed changes the model's digest; the same files give the same one", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'voicegate-fingerprint-'));
  try {
    writeFileSync(join(dir, 'model.onnx'), 'weights v1');
    mkdirSync(join(dir, 'data'));
    writeFileSync(join(dir, 'data', 'phonemes'), 'a b c');
    const files = { model: join(dir, 'model.onnx'), dataDir: join(dir, 'data'), tokens: undefined };
    const first = await pathsDigest(files);
    assert.match(first, /^[0-9a-f]{64}$/);
    assert.equal(await pathsDigest(files), first);
    writeFileSync(join(dir, 'model.onnx'), 'weights v2');
    const swapped = await pathsDigest(files);
    assert.notEqual(swapped, first);
    writeFileSync(join(dir, 'data', 'extra'), 'x');
    const added = await pathsDigest(files);
    assert.notEqual(added, swapped);
    assert.notEqual(await pathsDigest({ ...files, model: join(dir, 'missing.onnx') }), added);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an installed package is named with its version', () => {
  assert.match(packageVersion('@echogarden/espeak-ng-emscripten'), /^@echogarden\/espeak-ng-emscripten@\d+\.\d+\.\d+/);
  assert.equal(packageVersion('no-such-package-here'), 'no-such-package-here@unknown');
});
