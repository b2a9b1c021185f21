// layout.json, the one declaration of the layers and of the portable set, as the tests read it
// (eslint.config.js reads the same file for its portable rules).
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ROOT = resolve(new URL('../..', import.meta.url).pathname);

interface Globs {
  files: string[];
  ignores?: string[];
}
interface Layout {
  layers: Array<{ name: string; folders: string[] }>;
  portable: Globs;
  runtimeShared: Globs;
}

export const LAYOUT = JSON.parse(readFileSync(join(ROOT, 'layout.json'), 'utf8')) as Layout;

/** A glob as ESLint reads it (`**` any folders, `*` within one), as a RegExp on a root-relative path. */
export function globRegExp(glob: string): RegExp {
  const body = glob
    .split(/(\*\*\/|\*\*|\*)/)
    .map((part) => (part === '**/' ? '(?:.*/)?' : part === '**' ? '.*' : part === '*' ? '[^/]*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}$`);
}

function matcher({ files, ignores = [] }: Globs): (rel: string) => boolean {
  const yes = files.map(globRegExp);
  const no = ignores.map(globRegExp);
  return (rel) => yes.some((re) => re.test(rel)) && !no.some((re) => re.test(rel));
}

/** The portable core: runs on Node and Deno, so it reaches no Node-only module and no runtime global. */
export const isPortable = matcher(LAYOUT.portable);
/** The adapters' shared parts: Node-free and Deno-free like the core, but not the core. */
export const isRuntimeShared = matcher(LAYOUT.runtimeShared);

/** The .ts files under `dir`, root-relative. */
export function tsFilesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f));
}
