import { dirname, resolve } from 'node:path'
import { stat } from 'node:fs/promises'
import { InvalidInputError, InvalidPieError } from '../../core/errors.ts'
import { defineCommand } from '../context.ts'
import { EXIT } from '../exit-codes.ts'
import { formatBytes } from '../prepare-upload.ts'

/** The PIE toolkit loads on these commands only (hashing libraries are not free to import). */
const loadPie = () => import('../../pie/index.ts')

export const validate = defineCommand({
  path: ['validate'],
  args: '<pie>',
  summary: 'Check a pie.zip or PIE directory against every rule cairo-lang applies; exit 0 valid, 2 invalid.',
  details: [
    'Every broken rule is listed, one line each, naming the file, the rule and the value or byte offset, and ending with why it is refused:',
    'cairo-lang or cairo-vm refuses it, the two would not read the same PIE (ambiguous), the proof or its fact fails (unprovable), or a budget.',
    'With --json, "refusals" gives each problem with its reason: cairo-lang, cairo-vm, ambiguous, ambiguous-container, unprovable or budget.',
  ],
  positionals: { min: 1, max: 1 },
  async run(context) {
    const path = context.positionals[0]!
    await requireExisting(path)
    const pie = await loadPie()
    const result = await pie.validatePie(path, { signal: context.signal })
    if (context.json) {
      context.print('', {
        valid: result.valid,
        problems: result.problems,
        refusals: result.refusals,
        summary: result.summary,
      })
    } else if (result.valid) {
      const summary = result.summary
      context.print(
        `${path}: valid Cairo PIE (${summary.nSteps} steps, builtins ${summary.builtins.join(', ') || 'none'}, ${summary.memoryCells} memory cells).`,
      )
    } else {
      // Worded as `prove` words the same PIE (one format for one invalid PIE), with every problem under it.
      const only = result.problems.length === 1 ? result.problems[0]! : undefined
      // One problem that names the file already (a parsing budget): one line.
      if (only?.startsWith(`${path}: `)) throw new InvalidPieError(`<pie>: ${only}`, { input: '<pie>', problems: [] })
      throw new InvalidPieError(`<pie>: ${path} is not a valid Cairo PIE (${problemCount(result.problems)}).`, {
        input: '<pie>',
        problems: result.problems,
      })
    }
    return result.valid ? EXIT.ok : EXIT.usage
  },
})

export const pack = defineCommand({
  path: ['pack'],
  args: '<dir>',
  summary: 'Pack a PIE directory into the canonical pie.zip (deterministic, DEFLATE, validated).',
  positionals: { min: 1, max: 1 },
  options: {
    output: {
      type: 'string',
      short: 'o',
      valueName: '<file>',
      description: 'Where to write the zip.',
      default: 'pie.zip',
    },
  },
  async run(context) {
    const dir = context.positionals[0]!
    const info = await requireExisting(dir)
    if (!info.isDirectory()) {
      throw new InvalidInputError(
        `<dir>: ${dir} is not a directory; give the folder holding metadata.json, memory.bin, ...`,
        {
          input: '<dir>',
        },
      )
    }
    const output = context.values.output
    if (resolve(dirname(output)) === resolve(dir)) {
      throw new InvalidInputError(`-o ${output} would write the zip inside the PIE directory; write it elsewhere.`, {
        input: '--output',
      })
    }
    // One pass: the directory is read once, validated while it is packed, and the zip replaces
    // `output` only when the PIE is valid (a failure leaves no file behind and an existing zip
    // untouched).
    const { packChecked } = await import('../../pie/inspect/index.ts')
    const { PieBudgetError } = await import('../../pie/validate/index.ts')
    let packed
    try {
      packed = (await packChecked(dir, output, { signal: context.signal })).packed
    } catch (error) {
      if (!(error instanceof InvalidPieError) && !(error instanceof PieBudgetError)) throw error
      const problems = error instanceof InvalidPieError ? error.problems : [error.shortMessage]
      throw new InvalidPieError(
        `<dir>: ${dir} is not a valid Cairo PIE (${problemCount(problems)}); nothing was written.`,
        {
          input: '<dir>',
          problems,
        },
      )
    }
    context.print(`Wrote ${packed.path} (${formatBytes(packed.sizeBytes)}, sha256 ${packed.sha256}).`, {
      pieZip: packed.path,
      sha256: packed.sha256,
      sizeBytes: packed.sizeBytes,
      entries: packed.entries,
    })
    return EXIT.ok
  },
})

const HASH_VARIANTS = ['pedersen', 'poseidon', 'blake'] as const
const VARIANT_NAMES = { pedersen: 'Pedersen', poseidon: 'Poseidon', blake: 'Blake' } as const

export const inspect = defineCommand({
  path: ['inspect'],
  args: '<pie>',
  summary: 'Show a PIE: output, steps, builtins, job size, program hash, SHARP and Integrity facts, sha256.',
  details: [
    "The program hash is computed in one variant, Pedersen (SHARP's) unless --hash-variant says",
    "otherwise: a long program's Pedersen hash takes seconds, so the others are computed only when",
    'asked for.',
    "The facts are computed from the chosen variant's hash (from Pedersen's with `all`).",
  ],
  positionals: { min: 1, max: 1 },
  options: {
    'hash-variant': {
      type: 'string',
      valueName: '<variant>',
      description: 'Program hash variant(s) to compute: pedersen, poseidon, blake or all.',
      default: 'pedersen',
    },
  },
  async run(context) {
    const path = context.positionals[0]!
    const chosen = context.values['hash-variant']
    if (chosen !== 'all' && !(HASH_VARIANTS as readonly string[]).includes(chosen)) {
      throw new InvalidInputError(`--hash-variant ${chosen} is not one of pedersen, poseidon, blake, all.`, {
        input: '--hash-variant',
      })
    }
    await requireExisting(path)
    const pie = await loadPie()
    const inspection = await pie.inspectPie(path, { signal: context.signal })
    const variants = chosen === 'all' ? [...HASH_VARIANTS] : [chosen as (typeof HASH_VARIANTS)[number]]
    const main = variants[0]!
    // Only the chosen variants are read: each is computed on first read.
    const programHashes = Object.fromEntries(variants.map((variant) => [variant, inspection.programHashes[variant]]))
    const programHash = programHashes[main]!
    const output = inspection.output.map((word) => BigInt(word))
    // A SHARP fact is bytes32 on chain: shown as 0x and 64 hex digits (pie/shared/hex.ts).
    const { bytes32Text, toBytes32Hex } = await import('../../pie/shared/index.ts')
    const sharpFactHash =
      main === 'pedersen'
        ? bytes32Text(inspection.sharpFactHash)
        : toBytes32Hex(pie.computeSharpFact(BigInt(programHash), output, inspection.factTopology))
    const integrityFactHash =
      main === 'pedersen'
        ? inspection.integrityFactHash
        : pie.toHex(pie.computeIntegrityFact(BigInt(programHash), output))
    const json = {
      programHash,
      programHashVariant: main,
      programHashes,
      output: inspection.output,
      nSteps: inspection.nSteps,
      builtins: inspection.builtins,
      jobSize: inspection.jobSize,
      sharpFactHash,
      integrityFactHash,
      sha256: inspection.sha256,
    }
    const human = [
      ['PIE', path],
      ['output', `[${inspection.output.join(', ')}]`],
      ['steps', String(inspection.nSteps)],
      ['builtins', inspection.builtins.join(', ') || 'none'],
      ['job size', inspection.jobSize],
      ['program hash', `${programHash} (${VARIANT_NAMES[main]})`],
      ...variants.slice(1).map((variant) => [`  ${VARIANT_NAMES[variant]}`, programHashes[variant]!]),
      ['SHARP fact', sharpFactHash],
      ['Integrity fact', integrityFactHash],
      ['sha256', inspection.sha256 ?? ''],
    ]
      .map(([label, value]) => `${label!.padEnd(16)}${value}`)
      .join('\n')
    context.print(human, json)
    return EXIT.ok
  },
})

async function requireExisting(path: string) {
  try {
    return await stat(path)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new InvalidInputError(
      code === 'ENOENT'
        ? `Nothing at ${path}; give a pie.zip or a PIE directory.`
        : `Cannot read ${path} (${code}); check its permissions.`,
      { input: path },
    )
  }
}

/** "1 problem", "3 problems": as `prove` and the library count them. */
function problemCount(problems: readonly string[]): string {
  return problems.length === 1 ? '1 problem' : `${problems.length} problems`
}
