/**
 * metadata.json: the stripped program (data, builtins, main, prime) and the segment table.
 * Read with the exact JSON reader (./json.ts) so program words above 2^53 stay exact, then
 * checked against cairo-lang's rules (CairoPieMetadata / StrippedProgram validity checks). The
 * checks report every rule broken and still return what could be read, so memory.bin can be
 * checked against whatever segment table there is.
 */
import { BUILTIN_ORDER, METADATA, STARK_PRIME, TWO_POW_30, TWO_POW_63 } from '../shared/index.ts'
import { isJsonObject, showJson, type JsonObject, type JsonValue } from './json.ts'
import { checkKnownKeys, coercedInteger, notIntegerReason, type RefusalReason } from './reasons.ts'

export type Segment = { index: number; size: number }

export type StrippedProgram = {
  data: bigint[]
  builtins: string[]
  main: number
  prime: bigint
}

export type PieMetadata = {
  program: StrippedProgram
  programSegment: Segment | undefined
  executionSegment: Segment | undefined
  /** In file order. */
  builtinSegments: [string, Segment][]
  retFpSegment: Segment | undefined
  retPcSegment: Segment | undefined
  extraSegments: Segment[]
  /** Size of every declared segment with a usable index, by index. */
  segmentSizes: Map<number, number>
}

/** A broken rule and its reason class (reasons.ts); cairo-lang's when not given. */
type Report = (problem: string, reason?: RefusalReason) => void

/** The fields of cairo-lang's schemas (CairoPieMetadata, StrippedProgram, SegmentInfo). */
const METADATA_KEYS = [
  'program',
  'program_segment',
  'execution_segment',
  'ret_fp_segment',
  'ret_pc_segment',
  'builtin_segments',
  'extra_segments',
]
const PROGRAM_KEYS = ['data', 'builtins', 'main', 'prime']
const SEGMENT_KEYS = ['index', 'size']

function smallInt(value: JsonValue | undefined): number | undefined {
  return typeof value === 'bigint' && value >= 0n && value < BigInt(TWO_POW_30) ? Number(value) : undefined
}

function readSegment(value: JsonValue | undefined, where: string, report: Report): Segment | undefined {
  if (!isJsonObject(value)) {
    report(`${METADATA}: ${where} is ${showJson(value)}; expected {"index": ..., "size": ...}`)
    return undefined
  }
  checkKnownKeys(value, SEGMENT_KEYS, `${METADATA}: ${where}`, report)
  // A value cairo-lang coerces (cairo-vm refuses it) still places the segment, as cairo-lang does.
  const field = (name: 'index' | 'size') => {
    const raw = value.get(name)
    const number = smallInt(coercedInteger(raw))
    if (number === undefined || typeof raw !== 'bigint') {
      report(
        `${METADATA}: ${where}.${name} is ${showJson(raw)}; must be an integer in [0, 2^30)`,
        number === undefined ? 'cairo-lang' : 'cairo-vm',
      )
    }
    return number
  }
  const index = field('index')
  const size = field('size')
  return index === undefined || size === undefined ? undefined : { index, size }
}

/** A builtin cairo-vm's BuiltinName knows beyond the bootloader's list (Cairo 1's runner writes it). */
const CAIRO_VM_ONLY_BUILTINS = ['segment_arena']

export function checkBuiltins(
  builtins: readonly string[],
  report: Report,
  where = `${METADATA}: program.builtins`,
): void {
  const seen = new Set<string>()
  let previous = -1
  let previousName = ''
  for (const name of builtins) {
    const rank = (BUILTIN_ORDER as readonly string[]).indexOf(name)
    if (rank < 0) {
      // cairo-lang's is_valid_builtin_name takes any name of lowercase letters, digits and "_"
      // under 1000 characters; cairo-vm's BuiltinName only its own; the bootloader only its list.
      if (!/^[a-z0-9_]*$/.test(name) || name.length >= 1000)
        report(
          `${where}: builtin name ${JSON.stringify(name.length > 60 ? `${name.slice(0, 57)}...` : name)} is not lowercase letters, digits and "_" under 1000 characters`,
        )
      else if (CAIRO_VM_ONLY_BUILTINS.includes(name))
        report(`${where}: builtin "${name}" is not one the bootloader runs (${BUILTIN_ORDER.join(', ')})`, 'unprovable')
      else
        report(
          `${where}: unknown builtin "${name}"; cairo-vm's BuiltinName knows only ${[...BUILTIN_ORDER, ...CAIRO_VM_ONLY_BUILTINS].join(', ')}`,
          'cairo-vm',
        )
      if (seen.has(name)) report(`${where}: builtin "${name}" appears more than once`)
      seen.add(name)
      continue
    }
    if (seen.has(name)) {
      report(`${where}: builtin "${name}" appears more than once`)
      continue
    }
    seen.add(name)
    if (rank < previous) {
      // cairo-lang and cairo-vm load it; the bootloader's select_input_builtins does not.
      report(
        `${where}: "${name}" comes after "${previousName}", out of the canonical order (${BUILTIN_ORDER.join(', ')}) the bootloader requires`,
        'unprovable',
      )
    }
    previous = rank
    previousName = name
  }
}

function readProgram(root: JsonObject, report: Report): StrippedProgram | undefined {
  const program = root.get('program')
  if (!isJsonObject(program)) {
    report(`${METADATA}: "program" is ${showJson(program)}; expected an object`)
    return undefined
  }
  checkKnownKeys(program, PROGRAM_KEYS, `${METADATA}: program`, report)
  const rawPrime = program.get('prime')
  const prime = coercedInteger(rawPrime)
  if (typeof rawPrime !== 'bigint')
    report(`${METADATA}: program.prime is ${showJson(rawPrime)}; expected an integer`, notIntegerReason(rawPrime))
  if (prime === undefined) {
    // reported above
  } else if (prime <= TWO_POW_63) {
    report(`${METADATA}: program.prime = ${prime} is not above 2^63`)
  } else if (prime !== STARK_PRIME) {
    // cairo-vm's serde_impl::prime refuses any other; cairo-lang would read memory.bin's values
    // with the width of this prime, not the 32 bytes cairo-vm reads.
    report(`${METADATA}: program.prime = ${prime} is not the Stark prime 2^251 + 17 * 2^192 + 1`, 'cairo-vm')
  }
  const rawData = program.get('data')
  const data: bigint[] = []
  if (!Array.isArray(rawData)) {
    report(`${METADATA}: program.data is ${showJson(rawData)}; expected an array of integers`)
    return undefined
  }
  rawData.forEach((word, i) => {
    if (typeof word !== 'bigint') {
      // A word that went through a double once shows up here as 3.6185027886661313e+75.
      report(
        `${METADATA}: program.data[${i}] is ${showJson(word)}, not an integer (a big integer rounded by a JSON tool?)`,
        notIntegerReason(word),
      )
      // What cairo-lang reads there, to compare with memory as it would; -1 when nothing.
      data.push(coercedInteger(word) ?? -1n)
      return
    }
    if (word < 0n || (typeof prime === 'bigint' && word >= prime)) {
      report(`${METADATA}: program.data[${i}] = ${word} is not in [0, prime)`)
    }
    data.push(word)
  })
  const rawBuiltins = program.get('builtins')
  const builtins: string[] = []
  if (!Array.isArray(rawBuiltins)) {
    report(`${METADATA}: program.builtins is ${showJson(rawBuiltins)}; expected an array of names`)
  } else {
    for (const name of rawBuiltins) {
      if (typeof name === 'string') builtins.push(name)
      else report(`${METADATA}: program.builtins holds ${showJson(name)}; expected builtin names`)
    }
    checkBuiltins(builtins, report)
  }
  const rawMain = program.get('main')
  const coercedMain = coercedInteger(rawMain)
  let main = -1
  if (typeof rawMain !== 'bigint')
    report(`${METADATA}: program.main is ${showJson(rawMain)}; expected an integer`, notIntegerReason(rawMain))
  if (coercedMain === undefined) {
    // reported above
  } else if (coercedMain < 0n || coercedMain >= BigInt(data.length)) {
    report(`${METADATA}: program.main = ${coercedMain} is outside program.data (0 <= main < ${data.length})`)
  } else {
    main = Number(coercedMain)
  }
  return { data, builtins, main, prime: typeof prime === 'bigint' ? prime : 0n }
}

/** Checks metadata.json's parsed value; undefined when it is too broken to use at all. */
export function checkMetadata(root: JsonValue, report: Report): PieMetadata | undefined {
  if (!isJsonObject(root)) {
    report(`${METADATA}: top level is ${showJson(root)}; expected an object`)
    return undefined
  }
  checkKnownKeys(root, METADATA_KEYS, `${METADATA}: the top level`, report)
  const program = readProgram(root, report)
  if (!program) return undefined
  const nBuiltins = program.builtins.length
  const segmentSizes = new Map<number, number>()
  const declare = (segment: Segment | undefined, where: string) => {
    if (!segment) return
    if (segmentSizes.has(segment.index)) {
      report(`${METADATA}: ${where} reuses segment index ${segment.index}`)
      return
    }
    segmentSizes.set(segment.index, segment.size)
  }
  const expectIndex = (segment: Segment | undefined, where: string, index: number) => {
    if (segment && segment.index !== index) report(`${METADATA}: ${where}.index is ${segment.index}; must be ${index}`)
  }

  const programSegment = readSegment(root.get('program_segment'), 'program_segment', report)
  expectIndex(programSegment, 'program_segment', 0)
  if (programSegment && programSegment.size !== program.data.length) {
    report(
      `${METADATA}: program_segment.size is ${programSegment.size}; must equal len(program.data) = ${program.data.length}`,
    )
  }
  declare(programSegment, 'program_segment')

  const executionSegment = readSegment(root.get('execution_segment'), 'execution_segment', report)
  expectIndex(executionSegment, 'execution_segment', 1)
  declare(executionSegment, 'execution_segment')

  const builtinSegments: [string, Segment][] = []
  const rawBuiltinSegments = root.get('builtin_segments')
  if (!isJsonObject(rawBuiltinSegments)) {
    report(`${METADATA}: builtin_segments is ${showJson(rawBuiltinSegments)}; expected an object`)
  } else {
    const names = [...rawBuiltinSegments.keys()]
    if (names.join(',') !== program.builtins.join(',')) {
      report(
        `${METADATA}: builtin_segments lists [${names.join(', ')}]; must list program.builtins [${program.builtins.join(', ')}] in that order`,
      )
    }
    for (const [name, value] of rawBuiltinSegments) {
      const segment = readSegment(value, `builtin_segments.${name}`, report)
      const expected = program.builtins.indexOf(name)
      if (segment && expected >= 0) expectIndex(segment, `builtin_segments.${name}`, 2 + expected)
      declare(segment, `builtin_segments.${name}`)
      if (segment) builtinSegments.push([name, segment])
    }
  }

  const retFpSegment = readSegment(root.get('ret_fp_segment'), 'ret_fp_segment', report)
  const retPcSegment = readSegment(root.get('ret_pc_segment'), 'ret_pc_segment', report)
  expectIndex(retFpSegment, 'ret_fp_segment', nBuiltins + 2)
  expectIndex(retPcSegment, 'ret_pc_segment', nBuiltins + 3)
  if (retFpSegment && retFpSegment.size !== 0)
    report(`${METADATA}: ret_fp_segment.size is ${retFpSegment.size}; must be 0`)
  if (retPcSegment && retPcSegment.size !== 0)
    report(`${METADATA}: ret_pc_segment.size is ${retPcSegment.size}; must be 0`)
  declare(retFpSegment, 'ret_fp_segment')
  declare(retPcSegment, 'ret_pc_segment')

  const extraSegments: Segment[] = []
  const rawExtra = root.get('extra_segments')
  if (!Array.isArray(rawExtra)) {
    report(`${METADATA}: extra_segments is ${showJson(rawExtra)}; expected an array`)
  } else {
    rawExtra.forEach((value, k) => {
      const segment = readSegment(value, `extra_segments[${k}]`, report)
      expectIndex(segment, `extra_segments[${k}]`, nBuiltins + 4 + k)
      declare(segment, `extra_segments[${k}]`)
      if (segment) extraSegments.push(segment)
    })
  }

  return {
    program,
    programSegment,
    executionSegment,
    builtinSegments,
    retFpSegment,
    retPcSegment,
    extraSegments,
    segmentSizes,
  }
}
