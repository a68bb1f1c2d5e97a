import { open } from 'node:fs/promises'
import { z } from 'zod'
import { provingRefusal } from '../errors.ts'
import type { Form, UploadedFile } from '../multipart.ts'
import { HttpError } from '../router.ts'

/**
 * Reading the fields of a submission form, each with a zod schema. Each reader either returns a
 * usable value or throws a 400 whose message names the field and says what it must be, the body
 * every submission endpoint answers with for invalid parameters.
 */

function refuse(message: string): never {
  throw new HttpError(400, provingRefusal(message))
}

/** A form field's text: absent and empty are the same, not given. */
const given = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value === '' ? undefined : value))

const got = (input: unknown) => JSON.stringify(String(input).slice(0, 40))

/** Reads a field with its schema; the first problem is the 400's message. */
function read<T>(form: Form, schema: z.ZodType<T>): (name: string) => T {
  return (name) => {
    const result = schema.safeParse(form.fields.get(name))
    if (!result.success) refuse(result.error.issues[0]?.message ?? `${name} is not valid.`)
    return result.data
  }
}

export function optionalText(form: Form, name: string, maxLength = 256): string | null {
  const schema = given.pipe(
    z
      .string()
      .max(maxLength, { error: `${name} is longer than ${maxLength} characters.` })
      .optional(),
  )
  return read(form, schema)(name) ?? null
}

export function requiredText(form: Form, name: string, maxLength = 256): string {
  const value = optionalText(form, name, maxLength)
  const result = z.string().trim().min(1).safeParse(value)
  if (!result.success) refuse(`${name} is required.`)
  return value as string
}

/** Booleans travel as the strings "true" / "false". */
export function booleanField(form: Form, name: string, fallback?: boolean): boolean {
  const word = z.enum(['true', 'false'], {
    error: (issue) =>
      issue.input === undefined
        ? `${name} is required ("true" or "false").`
        : `${name} must be "true" or "false"; got ${got(issue.input)}.`,
  })
  const schema = given.pipe(fallback === undefined ? word : word.default(fallback ? 'true' : 'false'))
  return read(form, schema)(name) === 'true'
}

export function enumField<T extends string>(form: Form, name: string, allowed: readonly T[], fallback?: T): T {
  const value = z.enum(allowed as readonly [T, ...T[]], {
    error: (issue) =>
      issue.input === undefined
        ? `${name} is required (one of ${allowed.join(', ')}).`
        : `${name} must be one of ${allowed.join(', ')}; got ${got(issue.input)}.`,
  })
  return read(form, given.pipe(fallback === undefined ? value : value.default(fallback)))(name) as T
}

export function optionalEnum<T extends string>(form: Form, name: string, allowed: readonly T[]): T | null {
  return form.fields.get(name) ? enumField(form, name, allowed) : null
}

export function optionalInteger(form: Form, name: string, min: number, max: number): number | null {
  const schema = given.pipe(
    z
      .string()
      .regex(/^-?\d+$/)
      .transform(Number)
      .pipe(z.number().int().min(min).max(max).refine(Number.isSafeInteger))
      .optional(),
  )
  const result = schema.safeParse(form.fields.get(name))
  if (!result.success)
    refuse(`${name} must be a whole number from ${min} to ${max}; got ${got(form.fields.get(name))}.`)
  return result.data ?? null
}

export function requiredFile(form: Form, name: string): UploadedFile {
  const file = form.files.get(name)
  if (!file) refuse(`${name} is required (a file part).`)
  if (file.size === 0) refuse(`${name} is empty.`)
  return file
}

/** A JSON file's first meaningful byte, enough to refuse what is plainly not a JSON object. */
export async function requireJsonObjectFile(file: UploadedFile): Promise<void> {
  const handle = await open(file.path, 'r')
  try {
    const head = Buffer.alloc(1024)
    const { bytesRead } = await handle.read(head, 0, head.length, 0)
    const text = head
      .subarray(0, bytesRead)
      .toString('utf8')
      .replace(/^\uFEFF/, '')
      .trimStart()
    if (!text.startsWith('{')) refuse(`${file.field} is not a JSON object.`)
  } finally {
    await handle.close()
  }
}
