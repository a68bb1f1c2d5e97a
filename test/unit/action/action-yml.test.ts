import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ACTION_INPUTS } from '../../../src/action/inputs.ts'
import { ACTION_OUTPUTS } from '../../../src/action/outputs.ts'
import { parseYaml, readAction } from '../../helpers/run-action.ts'

/** The action.yml files are the contract; the code's declarations must say the same. */
describe.each(Object.keys(ACTION_INPUTS))('action.yml of %j', (name) => {
  const action = readAction(name)
  const inputs = ACTION_INPUTS[name]!

  it('declares exactly the inputs the code reads, with the same defaults', () => {
    expect(Object.keys(action.inputs).sort()).toEqual(Object.keys(inputs).sort())
    for (const [input, spec] of Object.entries(inputs)) {
      const declared = action.inputs[input]!
      expect(declared.default, `default of ${input}`).toBe(spec.kind === 'default' ? spec.default : undefined)
      expect(declared.required, `required of ${input}`).toBe(spec.kind === 'required' || (name !== '' && ['api-key', 'base-url'].includes(input)) ? 'true' : 'false')
    }
  })

  it('declares exactly the outputs the code sets', () => {
    expect(Object.keys(action.outputs).sort()).toEqual([...ACTION_OUTPUTS[name]!].sort())
  })

  it('describes every input and output, and what an omitted input means', () => {
    for (const [input, spec] of Object.entries(action.inputs)) {
      expect(spec.description?.length, input).toBeGreaterThan(20)
      if (spec.required !== 'true') expect(spec.description, input).toMatch(/omitted|Required|unless/)
    }
    for (const [output, spec] of Object.entries(action.outputs)) expect(spec.description?.length, output).toBeGreaterThan(10)
  })

  it('runs on node24 from the committed bundle, with branding', () => {
    const bundle = name === '' ? 'main' : name
    expect(action.runs.using).toBe('node24')
    expect(action.runs.main).toBe(name === '' ? 'dist/main/index.js' : `../dist/${bundle}/index.js`)
    expect(existsSync(resolve(action.dir, action.runs.main!))).toBe(true)
    if (action.runs.post) expect(existsSync(resolve(action.dir, action.runs.post))).toBe(true)
    expect(action.yaml.branding).toMatchObject({ icon: expect.any(String), color: expect.any(String) })
    expect(action.yaml.name).toEqual(expect.any(String))
    expect(action.yaml.description).toEqual(expect.any(String))
  })
})

describe('parseYaml', () => {
  it('reads nested maps, quoted and plain scalars, folded and literal blocks', () => {
    const yaml = parseYaml(
      [
        '# comment',
        "name: 'it''s'",
        'inputs:',
        '  a:',
        '    description: >-',
        '      one',
        '      two',
        '',
        '      three',
        "    default: 'false'",
        '  b:',
        '    description: |',
        '      x',
        '      y',
        'plain: hello # trailing',
      ].join('\n'),
    )
    expect(yaml).toEqual({
      name: "it's",
      inputs: { a: { description: 'one two\nthree', default: 'false' }, b: { description: 'x\ny\n' } },
      plain: 'hello',
    })
  })
})
