// Finding the newest agent transcript: the Markdown file the server last
// showed (window/showDocument), else the newest one in Warden's state dir.

import { readdir, stat } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';

/** $XDG_STATE_HOME/warden, as the server's config.StateDir computes it. */
export function stateDir(env: NodeJS.ProcessEnv, home: string): string {
  const base = env.XDG_STATE_HOME;
  return base && isAbsolute(base) ? join(base, 'warden') : join(home, '.local', 'state', 'warden');
}

/** The most recently modified *.md under dir, at most `depth` levels down. */
export async function newestTranscript(dir: string, depth = 3): Promise<string | undefined> {
  let best: { path: string; mtime: number } | undefined;
  async function walk(d: string, left: number): Promise<void> {
    let entries;
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory() && left > 0) {
        await walk(p, left - 1);
      } else if (e.isFile() && e.name.endsWith('.md')) {
        const { mtimeMs } = await stat(p);
        if (!best || mtimeMs > best.mtime) best = { path: p, mtime: mtimeMs };
      }
    }
  }
  await walk(dir, depth);
  return best?.path;
}
