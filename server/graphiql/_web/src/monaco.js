// What GraphiQL needs of Monaco: the editor core and the JSON language (for
// the variables, headers and response editors). build.mjs resolves the bare
// import 'monaco-editor' here instead of Monaco's editor.main.js, which would
// also bundle CSS, HTML, TypeScript and ~80 syntax grammars.
import 'monaco-editor/esm/vs/language/json/monaco.contribution.js';

export * from 'monaco-editor/esm/vs/editor/edcore.main.js';
