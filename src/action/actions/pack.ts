/**
 * `pack/`: packs a PIE directory into the canonical pie.zip (the same directory always gives
 * the same bytes), validates it and reports what it proves: program hash, output, steps and
 * the job size the service will be told. An invalid PIE fails the step and leaves no zip.
 */
import { mkdir, stat } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { InvalidInputError, InvalidPieError } from '../../core/errors.ts'
import { defineAction } from '../steps/define-action.ts'
import { PACK_INPUTS } from '../steps/inputs.ts'
import { ProvingStep } from '../steps/query-step.ts'

export const run = defineAction({
  inputs: PACK_INPUTS,
  step: (io, signal) => new ProvingStep(io, { action: 'Pack', signal }),
  async work({ io, signal, inputs, step }) {
    const workspace = io.env.GITHUB_WORKSPACE || process.cwd()
    const packed = await packAndInspect(
      resolve(workspace, inputs['pie-dir']),
      resolve(workspace, inputs.output),
      signal,
    )
    step.outputs.set({
      'pie-zip': packed.path,
      'pie-sha256': packed.sha256,
      'size-bytes': String(packed.sizeBytes),
      'n-steps': String(packed.inspection.nSteps),
      'job-size': packed.inspection.jobSize,
      'program-hash': packed.inspection.programHash,
      output: JSON.stringify(packed.inspection.output),
    })
    io.info(`Packed ${inputs['pie-dir']} into ${packed.path}: ${packed.sizeBytes} bytes, sha256 ${packed.sha256}.`)
    io.info(
      `Program hash ${packed.inspection.programHash}, ${packed.inspection.nSteps} steps (job size ${packed.inspection.jobSize}), output [${packed.inspection.output.join(', ')}].`,
    )
    step.extraRows.push(
      ['pie.zip', { code: packed.path }],
      ['SHA-256', { code: packed.sha256 }],
      ['Size', `${packed.sizeBytes} bytes`],
      ['Program hash', { code: packed.inspection.programHash }],
      ['Steps', `${packed.inspection.nSteps} (job size ${packed.inspection.jobSize})`],
      ['Output', { code: `[${packed.inspection.output.join(', ')}]` }],
    )
    await step.report({ outcome: 'done', headline: `Packed and validated ${inputs['pie-dir']}.` })
  },
})

/** Packs a PIE directory and inspects the zip; an invalid PIE leaves no zip behind. */
async function packAndInspect(dir: string, out: string, signal: AbortSignal) {
  let info
  try {
    info = await stat(dir)
  } catch {
    throw new InvalidInputError(`\`pie-dir\`: nothing at ${dir}; give the folder holding the PIE's files.`, {
      input: 'pie-dir',
    })
  }
  if (!info.isDirectory()) {
    throw new InvalidInputError(
      `\`pie-dir\`: ${dir} is not a folder; give the folder holding the PIE's files (metadata.json, memory.bin, ...).`,
      { input: 'pie-dir' },
    )
  }
  const { packChecked } = await import('../../pie/inspect/index.ts')
  await mkdir(dirname(out), { recursive: true })
  const { namedPackError } = await import('../../pipeline/prepared-pie.ts')
  // One pass: the directory is read once and inspected (validated) while it is packed; the zip
  // is renamed into place only when the PIE is valid, so a failure leaves no file and an
  // existing pie.zip as it was.
  try {
    const { packed, inspection } = await packChecked(dir, out, { signal })
    return { ...packed, inspection }
  } catch (error) {
    if (error instanceof InvalidPieError) {
      const count = error.problems.length === 1 ? '1 problem' : `${error.problems.length} problems`
      throw new InvalidPieError(`\`pie-dir\`: ${dir} is not a valid Cairo PIE (${count}); no pie.zip was written.`, {
        input: 'pie-dir',
        problems: error.problems,
      })
    }
    throw namedPackError(error, 'pie-dir', '`pie-dir`')
  }
}
