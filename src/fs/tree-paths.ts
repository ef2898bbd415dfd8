/** Paths of the directory tree: `/`-separated, relative to the root, `""` for the root itself. */
import { sep } from "node:path";

/** The folder of a `/`-separated path relative to the root (`""` for the root itself). */
export const parentOf = (rel: string) => (rel.includes("/") ? rel.slice(0, rel.lastIndexOf("/")) : "");
/** The last part of a `/`-separated path relative to the root (`"app.ts"` for `src/app.ts`). */
export const nameOf = (rel: string) => rel.slice(rel.lastIndexOf("/") + 1);

/** The path of the entry `name` of the folder `dir` (`""` for the root), relative to the root. */
export const joinRel = (dir: string, name: string) => (dir === "" ? name : `${dir}/${name}`);

/** The absolute path of `rel` (a normal path of the tree) below the folder `dir`: `join` without normalising. */
export const below = (dir: string, rel: string) => (dir.endsWith(sep) ? `${dir}${rel}` : `${dir}${sep}${rel}`);
