import { open } from 'node:fs/promises'
import { provingRefusal } from '../errors.ts'
import type { Form, UploadedFile } from '../multipart.ts'
import { HttpError } from '../router.ts'

/**
 * Reading the fields of a submission form. Each reader either returns a usable value or throws
 * a 400 whose message names the field and says what it must be, the body every submission
 * endpoint answers with for invalid parameters.
 */

function refuse(message: string): never {
  throw new HttpError(400, provingRefusal(message))
}

export function optionalText(form: Form, name: string, maxLength = 256): string | null {
  const value = form.fields.get(name)
  if (value === undefined || value === '') return null
  if (value.length > maxLength) refuse(`${name} is longer than ${maxLength} characters.`)
  return value
}

export function requiredText(form: Form, name: string, maxLength = 256): string {
  const value = optionalText(form, name, maxLength)
  if (value === null || value.trim() === '') refuse(`${name} is required.`)
  return value
}

/** Booleans travel as the strings "true" / "false" (contract.md). */
export function booleanField(form: Form, name: string, fallback?: boolean): boolean {
  const value = form.fields.get(name)
  if (value === undefined || value === '') {
    if (fallback === undefined) refuse(`${name} is required ("true" or "false").`)
    return fallback
  }
  if (value === 'true') return true
  if (value === 'false') return false
  refuse(`${name} must be "true" or "false"; got ${JSON.stringify(value.slice(0, 40))}.`)
}

export function enumField<T extends string>(form: Form, name: string, allowed: readonly T[], fallback?: T): T {
  const value = form.fields.get(name)
  if (value === undefined || value === '') {
    if (fallback === undefined) refuse(`${name} is required (one of ${allowed.join(', ')}).`)
    return fallback
  }
  if (!(allowed as readonly string[]).includes(value)) {
    refuse(`${name} must be one of ${allowed.join(', ')}; got ${JSON.stringify(value.slice(0, 40))}.`)
  }
  return value as T
}

export function optionalEnum<T extends string>(form: Form, name: string, allowed: readonly T[]): T | null {
  return form.fields.get(name) ? enumField(form, name, allowed) : null
}

export function optionalInteger(form: Form, name: string, min: number, max: number): number | null {
  const value = form.fields.get(name)
  if (value === undefined || value === '') return null
  const number = /^-?\d+$/.test(value) ? Number(value) : Number.NaN
  if (!Number.isSafeInteger(number) || number < min || number > max) {
    refuse(`${name} must be a whole number from ${min} to ${max}; got ${JSON.stringify(value.slice(0, 40))}.`)
  }
  return number
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
    const text = head.subarray(0, bytesRead).toString('utf8').replace(/^\uFEFF/, '').trimStart()
    if (!text.startsWith('{')) refuse(`${file.field} is not a JSON object.`)
  } finally {
    await handle.close()
  }
}
