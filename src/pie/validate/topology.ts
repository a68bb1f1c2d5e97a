/**
 * The shape of a PIE's output for its SHARP fact, read from `additional_data.json`'s
 * `output_builtin` entry (cairo-lang's get_fact_topology_from_additional_data).
 */
import { FactTopologyError, type FactTopology } from '../shared/index.ts'
import { isJsonObject, showJson, type JsonValue } from './json.ts'

export const GPS_FACT_TOPOLOGY = 'gps_fact_topology'

function smallNonNegative(value: JsonValue | undefined): number | undefined {
  return typeof value === 'bigint' && value >= 0n && value < 1n << 53n ? Number(value) : undefined
}

/**
 * The fact topology of a PIE's output (its pages and trees) from `additional_data.json`'s
 * `output_builtin` entry (`{ pages: { "<id>": [start, size] }, attributes: { gps_fact_topology?: [...] } }`).
 * Absent data means one page holding the whole output.
 *
 * @param outputSize How many words the output has.
 * @param outputBuiltin The `output_builtin` entry of `additional_data.json`, parsed.
 * @returns The topology, for {@link computeSharpFact}. An entry whose pages or topology do not fit
 * the output throws (an Error saying which).
 * @example
 * ```ts
 * import { readFile } from 'node:fs/promises'
 * import { factTopologyFromAdditionalData } from 'proving-kit/pie'
 *
 * const additionalData = JSON.parse(await readFile('build/pie/additional_data.json', 'utf8'))
 * const topology = factTopologyFromAdditionalData(4, additionalData.output_builtin)
 * ```
 */
export function factTopologyFromAdditionalData(outputSize: number, outputBuiltin: JsonValue | undefined): FactTopology {
  if (outputBuiltin === undefined || outputBuiltin === null) return { treeStructure: [1, 0], pageSizes: [outputSize] }
  if (!isJsonObject(outputBuiltin))
    throw new FactTopologyError(`output_builtin is ${showJson(outputBuiltin)}; expected an object`)
  const pagesValue = outputBuiltin.get('pages') ?? new Map()
  const attributes = outputBuiltin.get('attributes') ?? new Map()
  if (!isJsonObject(pagesValue))
    throw new FactTopologyError(`output_builtin.pages is ${showJson(pagesValue)}; expected an object`)
  if (!isJsonObject(attributes)) {
    throw new FactTopologyError(`output_builtin.attributes is ${showJson(attributes)}; expected an object`)
  }

  const pages: { id: number; start: number | undefined; size: number | undefined }[] = []
  for (const [key, value] of pagesValue) {
    if (!/^[0-9]+$/.test(key)) throw new FactTopologyError(`output page id "${key}" is not an integer`)
    let start: JsonValue | undefined
    let size: JsonValue | undefined
    // [start, size] only: cairo-lang unpacks the pair (an object's keys would be read), cairo-vm
    // reads a list of length 2.
    if (Array.isArray(value) && value.length === 2) [start, size] = value
    else throw new FactTopologyError(`output page ${key} is ${showJson(value)}; expected [start, size]`)
    pages.push({ id: Number(key), start: smallNonNegative(start), size: smallNonNegative(size) })
  }
  pages.sort((a, b) => a.id - b.id)

  let treeStructure: number[]
  if (attributes.has(GPS_FACT_TOPOLOGY)) {
    const raw = attributes.get(GPS_FACT_TOPOLOGY)
    const values = Array.isArray(raw)
      ? raw.map((x) => (typeof x === 'bigint' && x >= 0n && x < 1n << 30n ? Number(x) : -1))
      : []
    if (
      !Array.isArray(raw) ||
      values.length === 0 ||
      values.length > 10 ||
      values.length % 2 !== 0 ||
      values.includes(-1)
    ) {
      throw new FactTopologyError(`${GPS_FACT_TOPOLOGY} must be 2 to 10 integers in [0, 2^30), in pairs`)
    }
    treeStructure = values
  } else {
    if (pages.length)
      throw new FactTopologyError(`output pages are declared but the ${GPS_FACT_TOPOLOGY} attribute is missing`)
    treeStructure = [1, 0]
  }

  // Pages must tile the output from page 1's start to the end; page 0 is what comes before.
  let page0Size = outputSize
  let expectedStart: number | undefined
  pages.forEach((page, i) => {
    if (page.id !== i + 1) throw new FactTopologyError(`expected output page id ${i + 1}, found ${page.id}`)
    if (page.start === undefined || page.size === undefined)
      throw new FactTopologyError(`output page ${page.id} has an invalid start or size`)
    if (page.id === 1) {
      if (!(page.start > 0 && page.start <= outputSize))
        throw new FactTopologyError(`output page 1 starts at ${page.start}, outside (0, ${outputSize}]`)
      page0Size = page.start
    } else if (page.start !== expectedStart) {
      throw new FactTopologyError(`output page ${page.id} starts at ${page.start}; expected ${expectedStart}`)
    }
    if (!(page.size > 0 && page.size <= outputSize))
      throw new FactTopologyError(`output page ${page.id} has size ${page.size}`)
    expectedStart = page.start + page.size
  })
  if (pages.length && expectedStart !== outputSize) {
    throw new FactTopologyError(
      `output pages end at ${expectedStart}; they must cover the whole output (${outputSize} words)`,
    )
  }
  return { treeStructure, pageSizes: [page0Size, ...pages.map((page) => page.size!)] }
}
