import { readdirSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { stepEntry } from '../../../scripts/build-dist.ts'
import { ACTION_INPUTS } from '../../../src/action/steps/inputs.ts'
import { ACTION_NAMES, type ActionName } from '../../../src/action/names.ts'
import { ACTION_OUTPUTS } from '../../../src/action/steps/outputs.ts'
import { readAction, REPO_ROOT } from '../../helpers/run-action.ts'

/**
 * Inputs the code declares optional but a sub-action's cross-check requires (each action.yml
 * says `required: true`): the services' addresses and credentials. The root action's are
 * optional with the emulator, and `tasks-url` only matters with a decommitment.
 */
const REQUIRED_BY_CROSS_CHECK = ['api-key', 'base-url', 'tasks-url', 'storage-proof-url', 'private-key', 'auth-url']

/** The action.yml files are the contract; the code's declarations must say the same. */
describe.each(Object.keys(ACTION_INPUTS))('action.yml of %j', (name) => {
  const action = readAction(name)
  const inputs = ACTION_INPUTS[name]!

  it('declares exactly the inputs the code reads, with the same defaults', () => {
    expect(Object.keys(action.inputs).sort()).toEqual(Object.keys(inputs).sort())
    for (const [input, spec] of Object.entries(inputs)) {
      const declared = action.inputs[input]!
      expect(declared.default, `default of ${input}`).toBe(spec.kind === 'default' ? spec.default : undefined)
      expect(declared.required === true, `required of ${input}`).toBe(
        spec.kind === 'required' || (name !== '' && REQUIRED_BY_CROSS_CHECK.includes(input)),
      )
    }
  })

  it('declares exactly the outputs the code sets', () => {
    expect(Object.keys(action.outputs).sort()).toEqual([...ACTION_OUTPUTS[name]!].sort())
  })

  it('describes every input and output, and what an omitted input means', () => {
    for (const [input, spec] of Object.entries(action.inputs)) {
      expect(spec.description?.length, input).toBeGreaterThan(20)
      if (spec.required !== true) expect(spec.description, input).toMatch(/omitted|Required|unless/)
    }
    for (const [output, spec] of Object.entries(action.outputs))
      expect(spec.description?.length, output).toBeGreaterThan(10)
  })

  it('runs on node24 from its step entry into the one committed bundle, with branding', () => {
    const bundle = name === '' ? 'main' : name
    expect(action.runs.using).toBe('node24')
    expect(action.runs.main).toBe(name === '' ? 'dist/main/index.js' : `../dist/${bundle}/index.js`)
    for (const script of [action.runs.main, action.runs.post]) {
      if (script === undefined) continue
      const step = /^(?:\.\.\/)?dist\/([a-z-]+)\/index\.js$/.exec(script)?.[1]
      expect(ACTION_NAMES, script).toContain(step)
      // The entry holds no code of its own: it runs the shared bundle with its name.
      expect(readFileSync(resolve(action.dir, script), 'utf8')).toBe(stepEntry(step as ActionName))
    }
    expect(action.yaml.branding).toMatchObject({ icon: expect.any(String), color: expect.any(String) })
    expect(action.yaml.name).toEqual(expect.any(String))
    expect(action.yaml.description).toEqual(expect.any(String))
  })
})

describe('the registries', () => {
  it('cover every action.yml of the repository', () => {
    const folders = readdirSync(REPO_ROOT, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && readdirSync(resolve(REPO_ROOT, entry.name)).includes('action.yml'))
      .map((entry) => entry.name)
    expect(Object.keys(ACTION_INPUTS).sort()).toEqual(['', ...folders].sort())
    expect(Object.keys(ACTION_OUTPUTS).sort()).toEqual(['', ...folders].sort())
  })

  it('every step name is run by some action.yml', () => {
    const scripts = Object.keys(ACTION_INPUTS).flatMap((name) => {
      const { runs } = readAction(name)
      return [runs.main, runs.post].filter((script) => script !== undefined)
    })
    for (const step of ACTION_NAMES)
      expect(
        scripts.some((script) => script.endsWith(`dist/${step}/index.js`)),
        step,
      ).toBe(true)
  })
})
