// Finds import cycles among a package's own modules: parses the relative `import` / `export
// ... from` specifiers (type-only ones included: they tie the files just as much for a reader)
// of every .ts file under a directory and reports each cycle once.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const SPECIFIER = /(?:^|\n)\s*(?:import|export)\s[^'"`;]*?from\s*['"](\.{1,2}\/[^'"]+)['"]/g;

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The relative imports of one file, resolved to `.ts` paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(SPECIFIER)].map((m) =>
    resolve(dirname(file), (m[1] as string).replace(/\.js$/, '.ts')),
  );
}

/**
 * Every import cycle among the `.ts` files under `dir`, each as the list of files (relative
 * to `dir`) from its smallest member around back to it. Empty when the graph is acyclic.
 */
export function findImportCycles(dir: string): string[][] {
  const root = resolve(dir);
  const files = tsFiles(root);
  const known = new Set(files);
  const graph = new Map(files.map((f) => [f, importsOf(f).filter((i) => known.has(i))]));
  const cycles = new Map<string, string[]>();
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') {
        const cycle = stack.slice(stack.indexOf(next)).map((f) => relative(root, f));
        const start = cycle.indexOf([...cycle].sort()[0] as string);
        const normal = [...cycle.slice(start), ...cycle.slice(0, start)];
        cycles.set(normal.join(' -> '), [...normal, normal[0] as string]);
      } else if (state.get(next) === undefined) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (state.get(file) === undefined) visit(file);
  return [...cycles.values()];
}
