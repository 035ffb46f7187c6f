// Assembles every src/**/kernels/*.wat into dist/src/**/kernels/*.wasm (part of `npm run build`).
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import initWabt from 'wabt';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const wabt = await initWabt();

function* watFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* watFiles(path);
    else if (entry.name.endsWith('.wat')) yield path;
  }
}

for (const source of watFiles(join(root, 'src'))) {
  const module = wabt.parseWat(source, readFileSync(source, 'utf8'), { simd: true });
  module.validate();
  const { buffer } = module.toBinary({});
  module.destroy();
  const target = join(root, 'dist', relative(root, source)).replace(/\.wat$/, '.wasm');
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, buffer);
}
