/**
 * Figure 7: program hashes by program size. Each measurement is bench/hash.ts in its own
 * process (tables built on first use included, program generation excluded): the Pedersen
 * hash (src/pie/hash/pedersen.ts over wasm/pedersen.ts's WebAssembly) of synthetic programs of 1k, 10k, 100k and 1M words (as `gen:pie
 * --program-words` writes them), next to the peer, the same chain through @scure/starknet's
 * pedersen (1k words; its cost is linear in the words, so it is scaled for the larger sizes),
 * and Poseidon and Blake at 100k words. One run each (a 1M-word Pedersen hash takes minutes).
 */
import { join } from 'node:path'
import { BENCH, type FigureContext, type FigureResult, fmt, fmtMiB, fmtMs, measure, NODE, table } from './lib.ts'

export async function figureHash(ctx: FigureContext): Promise<FigureResult> {
  const started = performance.now()
  const run = async (variant: string, words: number) => {
    const result = await measure(NODE, [join(BENCH, 'hash.ts'), variant, String(words)])
    if (result.code !== 0) throw new Error(`bench/hash.ts ${variant} ${words} failed: ${result.stderr}`)
    const inside = JSON.parse(result.stdout) as { ms: number; hash: string }
    ctx.log(`  ${variant} ${words} words: ${fmtMs(inside.ms)} (CPU ${fmtMs(result.cpuMs)}, ${fmtMiB(result.rssKiB)})`)
    return { ...inside, cpuMs: result.cpuMs, rssKiB: result.rssKiB }
  }
  const sizes = ctx.quick ? [1000, 10_000] : [1000, 10_000, 100_000, 1_000_000]
  const scure = await run('scure-pedersen', 1000)
  const perWord = scure.ms / 1000
  const rows: string[][] = []
  const results = new Map<number, Awaited<ReturnType<typeof run>>>()
  for (const words of sizes) {
    const r = await run('pedersen', words)
    results.set(words, r)
    rows.push([
      `${words.toLocaleString('en')}`,
      fmtMs(r.ms),
      fmtMs(r.cpuMs),
      `${fmt((r.ms / words) * 1000, 0)} µs`,
      words === 1000 ? fmtMs(scure.ms) : `~${fmtMs(perWord * words)} (scaled)`,
      `${fmt((perWord * words) / r.ms, 1)}x`,
      fmtMiB(r.rssKiB),
    ])
  }
  if (results.get(1000)!.hash !== scure.hash) throw new Error('the 1k-word hashes differ from @scure/starknet')
  const other = ctx.quick ? 10_000 : 100_000
  const poseidon = await run('poseidon', other)
  const peerWords = ctx.quick ? 1000 : 10_000
  const scurePoseidon = await run('scure-poseidon', peerWords)
  const scurePoseidonScaled = (scurePoseidon.ms / peerWords) * other
  const blake = await run('blake', other)
  const target = results.get(100_000)
  const body = [
    "Synthetic programs (fibonacci's words, then instruction-like filler: 63-bit encodings, small immediates, negative constants). Wall time of the hash inside its own process, one run each; CPU time and peak RSS of the process by GNU time.",
    '',
    table(
      ['words', 'Pedersen (ours)', 'CPU (process)', 'per word', '@scure/starknet chain', 'speed-up', 'peak RSS'],
      rows,
    ),
    '',
    `Other variants at ${other.toLocaleString('en')} words (computed only when the service reports them): Poseidon (ours, the same WebAssembly) ${fmtMs(poseidon.ms)} against @scure/starknet's poseidonHashMany ~${fmtMs(scurePoseidonScaled)} (${fmtMs(scurePoseidon.ms)} at ${peerWords.toLocaleString('en')} words, scaled): ${fmt(scurePoseidonScaled / poseidon.ms, 1)}x; Blake2s (@noble/hashes) ${fmtMs(blake.ms)}.`,
  ].join('\n')
  return {
    id: 7,
    title: 'Program hash by program size: Pedersen (WebAssembly, window tables) vs @scure/starknet',
    body,
    checks: [
      target
        ? {
            name: 'Pedersen program hash, 100k words',
            value: fmtMs(target.ms),
            target: '<= 10 s (stretch 3 s)',
            pass: target.ms <= 10_000,
          }
        : { name: 'Pedersen program hash, 100k words', value: 'not run (--quick)', target: '<= 10 s', pass: null },
      {
        name: 'Pedersen program hash, 1M words',
        value: results.get(1_000_000) ? fmtMs(results.get(1_000_000)!.ms) : 'not run (--quick)',
        target: 'reported',
        pass: null,
      },
      { name: 'same hash as @scure/starknet (1k words)', value: 'equal', target: 'equal', pass: true },
    ],
    notes: [],
    seconds: (performance.now() - started) / 1000,
  }
}
