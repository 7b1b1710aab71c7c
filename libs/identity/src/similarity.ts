// Scratch buffers reused across calls: scoring runs on the hot path of every match.
let flagsA = new Uint8Array(64);
let flagsB = new Uint8Array(64);

/** Jaro-Winkler similarity in [0, 1] (prefix scale 0.1, prefix up to 4). */
export function jaroWinkler(a: string, b: string): number {
  if (a === b) return a.length === 0 ? 0 : 1;
  const la = a.length;
  const lb = b.length;
  if (la === 0 || lb === 0) return 0;
  if (flagsA.length < la) flagsA = new Uint8Array(la * 2);
  if (flagsB.length < lb) flagsB = new Uint8Array(lb * 2);
  flagsA.fill(0, 0, la);
  flagsB.fill(0, 0, lb);
  const window = Math.max(0, Math.floor(Math.max(la, lb) / 2) - 1);
  let matches = 0;
  for (let i = 0; i < la; i++) {
    const from = Math.max(0, i - window);
    const to = Math.min(lb - 1, i + window);
    const c = a.charCodeAt(i);
    for (let j = from; j <= to; j++) {
      if (flagsB[j] === 0 && b.charCodeAt(j) === c) {
        flagsA[i] = 1;
        flagsB[j] = 1;
        matches++;
        break;
      }
    }
  }
  if (matches === 0) return 0;
  let transpositions = 0;
  let k = 0;
  for (let i = 0; i < la; i++) {
    if (flagsA[i] === 0) continue;
    while (flagsB[k] === 0) k++;
    if (a.charCodeAt(i) !== b.charCodeAt(k)) transpositions++;
    k++;
  }
  const m = matches;
  const jaro = (m / la + m / lb + (m - transpositions / 2) / m) / 3;
  let prefix = 0;
  const maxPrefix = Math.min(4, la, lb);
  while (prefix < maxPrefix && a.charCodeAt(prefix) === b.charCodeAt(prefix)) prefix++;
  return jaro + prefix * 0.1 * (1 - jaro);
}

/**
 * Similarity of two normalised names (tokens joined by single spaces). With two or more
 * tokens each, first and last tokens are compared pairwise, in the given and the swapped
 * order, and the weaker token decides: `ana lima` ~ `lima ana` ~ `ana lmia`, while
 * `ana lima` and `ana lira` (one shared token, one different) stay apart.
 */
export function nameSimilarity(a: string, b: string): number {
  if (!a || !b) return 0;
  if (a === b) return 1;
  const sa = a.indexOf(' ');
  const sb = b.indexOf(' ');
  if (sa < 0 || sb < 0) return jaroWinkler(a, b);
  const a0 = a.slice(0, sa);
  const aL = a.slice(a.lastIndexOf(' ') + 1);
  const b0 = b.slice(0, sb);
  const bL = b.slice(b.lastIndexOf(' ') + 1);
  const straight = Math.min(jaroWinkler(a0, b0), jaroWinkler(aL, bL));
  const swapped = Math.min(jaroWinkler(a0, bL), jaroWinkler(aL, b0));
  return Math.max(straight, swapped);
}
