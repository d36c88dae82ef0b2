// Bundles GraphiQL (src/main.jsx) and Monaco's web workers into ../dist,
// which the Go package embeds: dist/index.html is served at the gateway's
// root, everything else under graphiql/. Run through `make graphiql`
// (npm ci && npm run build); the output is committed so that building the
// gateway needs only Go.
import { build } from 'esbuild';
import { copyFile, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, '..', 'dist');
const out = path.join(dist, 'graphiql');

// Only the parts of Monaco GraphiQL uses (src/monaco.js), for the bare
// specifier; deep imports (monaco-editor/esm/...) resolve as usual.
const slimMonaco = {
  name: 'slim-monaco',
  setup(b) {
    b.onResolve({ filter: /^monaco-editor$/ }, () => ({ path: path.join(here, 'src', 'monaco.js') }));
  },
};

const common = {
  bundle: true,
  minify: true,
  legalComments: 'external', // the bundled packages' license notices, in *.LEGAL.txt
  target: 'es2022',
  define: { 'process.env.NODE_ENV': '"production"' },
  logLevel: 'warning',
};

await rm(dist, { recursive: true, force: true });
await mkdir(out, { recursive: true });

await build({
  ...common,
  entryPoints: { graphiql: path.join(here, 'src', 'main.jsx') },
  outdir: out,
  // One JS and one CSS file, no code splitting: esbuild does not load the
  // CSS of lazily imported chunks, and GraphiQL imports Monaco, whose
  // modules import CSS, lazily. (Prettier, ~700 KiB, comes along with it.)
  format: 'esm',
  assetNames: '[name]-[hash]',
  jsx: 'automatic',
  loader: { '.ttf': 'file', '.woff': 'file', '.woff2': 'file' },
  plugins: [slimMonaco],
});

await build({
  ...common,
  entryPoints: {
    'editor.worker': 'monaco-editor/esm/vs/editor/editor.worker.js',
    'json.worker': 'monaco-editor/esm/vs/language/json/json.worker.js',
    'graphql.worker': 'monaco-graphql/esm/graphql.worker.js',
  },
  outdir: out,
  format: 'iife',
  plugins: [slimMonaco],
});

await copyFile(path.join(here, 'index.html'), path.join(dist, 'index.html'));

let total = 0;
for (const f of (await readdir(out)).sort()) {
  total += (await stat(path.join(out, f))).size;
}
console.log(`dist: ${(await readdir(out)).length} files, ${(total / 1024).toFixed(0)} KiB`);
