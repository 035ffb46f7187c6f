// The files the compiled code reads beside it (part of `npm run build`): every src/**/kernels/*.wat
// assembled into dist/src/**/kernels/*.wasm, every src/**/*.sql (the stores' migrations) copied,
// and the console's files (src/console/assets/) copied.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import initWabt from 'wabt';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const wabt = await initWabt();

function* filesEndingIn(dir, ending) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* filesEndingIn(path, ending);
    else if (entry.name.endsWith(ending)) yield path;
  }
}

for (const source of filesEndingIn(join(root, 'src'), '.sql')) {
  const target = join(root, 'dist', relative(root, source));
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(source, target);
}

// The operator console's page, script and style, served as they are written (src/console/assets/).
for (const name of readdirSync(join(root, 'src/console/assets'))) {
  const target = join(root, 'dist/src/console/assets', name);
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(join(root, 'src/console/assets', name), target);
}

for (const source of filesEndingIn(join(root, 'src'), '.wat')) {
  const module = wabt.parseWat(source, readFileSync(source, 'utf8'), { simd: true });
  module.validate();
  const { buffer } = module.toBinary({});
  module.destroy();
  const target = join(root, 'dist', relative(root, source)).replace(/\.wat$/, '.wasm');
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, buffer);
}
