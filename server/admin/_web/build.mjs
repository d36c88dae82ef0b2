// Bundles the admin console (src/main.jsx) into ../dist, which the Go
// package embeds: dist/index.html is served at /admin and /admin/, the rest
// under /admin/assets/. Run through `make admin-console` (npm ci && npm run
// build); the output is committed so that building the gateway needs only Go,
// and scripts/test.sh rebuilds it from package-lock.json and fails when that
// changes a byte. So the output must depend on nothing but the sources and
// the locked packages: no timestamps, no absolute paths (esbuild names
// modules relative to absWorkingDir, set here to this directory), no
// content hashes of files that vary by machine.
import { build } from 'esbuild';
import { copyFile, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, '..', 'dist');
const out = path.join(dist, 'assets');

await rm(dist, { recursive: true, force: true });
await mkdir(out, { recursive: true });

await build({
  absWorkingDir: here,
  entryPoints: { admin: 'src/main.jsx' },
  outdir: out,
  bundle: true,
  minify: true,
  legalComments: 'external', // the bundled packages' license notices, in admin.js.LEGAL.txt
  target: 'es2022',
  format: 'esm',
  jsx: 'automatic',
  define: { 'process.env.NODE_ENV': '"production"' },
  logLevel: 'warning',
});

await copyFile(path.join(here, 'index.html'), path.join(dist, 'index.html'));

let total = 0;
const files = (await readdir(out)).sort();
for (const f of files) {
  const size = (await stat(path.join(out, f))).size;
  total += size;
  console.log(`  assets/${f}: ${(size / 1024).toFixed(0)} KiB`);
}
console.log(`dist: ${files.length} files, ${(total / 1024).toFixed(0)} KiB`);
