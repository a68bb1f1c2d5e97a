import busboy from 'busboy'
import { describe, expect, it } from 'vitest'
import { streamedMultipart } from '../../../src/core/multipart-stream.ts'

async function* chunks(parts: Uint8Array[]) {
  for (const part of parts) yield part
}

/** Parses a body the way the emulator does (busboy): the fields, then each file's bytes. */
async function parse(headers: Record<string, string>, body: AsyncIterable<Uint8Array>) {
  const fields: [string, string][] = []
  const files: { field: string; name: string; type: string; bytes: Buffer }[] = []
  const parser = busboy({ headers })
  const done = new Promise<void>((resolve, reject) => parser.on('close', resolve).on('error', reject))
  parser.on('field', (name, value) => fields.push([name, value]))
  parser.on('file', (field, stream, info) => {
    const parts: Buffer[] = []
    stream.on('data', (chunk: Buffer) => parts.push(chunk))
    stream.on('end', () =>
      files.push({ field, name: info.filename ?? '', type: info.mimeType, bytes: Buffer.concat(parts) }),
    )
  })
  for await (const chunk of body) parser.write(chunk)
  parser.end()
  await done
  return { fields, files }
}

describe('streamedMultipart', () => {
  it('sends the text fields, then the file as it is produced, with no length', async () => {
    const pieces = [Buffer.from('PK\x03\x04'), Buffer.from('\r\n--not-the-boundary\r\n'), Buffer.alloc(100_000, 7)]
    const factory = streamedMultipart(
      { mockFactHash: 'false', prover: 'svc_sharp', layout: 'auto' },
      {
        field: 'pieFile',
        fileName: 'pie.zip',
        contentType: 'application/zip',
        bytes: chunks(pieces),
      },
    )
    const body = factory()
    expect(body.headers['content-length']).toBeUndefined()
    expect(body.headers['content-type']).toMatch(/^multipart\/form-data; boundary=form-data-boundary-[0-9a-f]{32}$/)
    const { fields, files } = await parse(body.headers, body.stream)
    expect(fields).toEqual([
      ['mockFactHash', 'false'],
      ['prover', 'svc_sharp'],
      ['layout', 'auto'],
    ])
    expect(files).toHaveLength(1)
    expect(files[0]).toMatchObject({ field: 'pieFile', name: 'pie.zip', type: 'application/zip' })
    expect(files[0]!.bytes.equals(Buffer.concat(pieces))).toBe(true)
    // The bytes cannot be produced twice.
    expect(() => factory()).toThrow(/only once/)
  })

  it('ends with an error, before the closing boundary, when the file stream fails', async () => {
    async function* failing() {
      yield Buffer.from('PK\x03\x04 the first bytes')
      throw new Error('the PIE is not valid')
    }
    const body = streamedMultipart(
      { prover: 'svc_sharp' },
      { field: 'pieFile', fileName: 'pie.zip', contentType: 'application/zip', bytes: failing() },
    )()
    const sent: Buffer[] = []
    await expect(
      (async () => {
        for await (const chunk of body.stream) sent.push(chunk as Buffer)
      })(),
    ).rejects.toThrow('the PIE is not valid')
    const boundary = /boundary=(\S+)/.exec(body.headers['content-type']!)![1]!
    expect(Buffer.concat(sent).toString('latin1')).not.toContain(`--${boundary}--`)
  })
})
