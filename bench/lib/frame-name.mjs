/**
 * A V8 profile frame's name as bench/lib/profile-top.mjs and heap-top.mjs print it: the function
 * and where it is, the path cut at the project's or a package's first folder.
 */
export function frameName(f) {
  const where = f.url ? `${f.url.replace(/^.*?\/(node_modules|dist|src|bench)\//, '$1/')}:${f.lineNumber + 1}` : '';
  return `${f.functionName || '(anonymous)'} ${where}`.trim();
}
