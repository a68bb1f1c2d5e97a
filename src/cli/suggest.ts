/**
 * "Did you mean": the known word closest to a mistyped one, when it is close enough to be the
 * likely intent (a typo, a transposition, a missing or extra letter, or the start of the word).
 */
export function closestWord(typed: string, known: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Number.POSITIVE_INFINITY
  for (const word of known) {
    const distance = editDistance(typed.toLowerCase(), word.toLowerCase())
    if (distance < bestDistance) {
      best = word
      bestDistance = distance
    }
  }
  if (best === undefined) return undefined
  // Short words need a near match: one edit in three letters, at least one, at most three.
  const allowed = Math.min(3, Math.max(1, Math.floor(typed.length / 3)))
  if (bestDistance <= allowed) return best
  // `--wai` for --wait, `auth` written `aut`: an unambiguous start of one word.
  const starting = typed.length >= 3 ? known.filter((word) => word.startsWith(typed)) : []
  return starting.length === 1 ? starting[0] : undefined
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  )
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let value = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, rows[i - 2]![j - 2]! + 1)
      rows[i]![j] = value
    }
  }
  return rows[a.length]![b.length]!
}
