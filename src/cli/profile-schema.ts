import { z } from 'zod'

/**
 * The config file's schema (strict: a misspelt field is refused, naming it). Apart from
 * profiles.ts so that zod loads only when a config file is read.
 */

const url = z.string().refine((text) => {
  try {
    return ['http:', 'https:'].includes(new URL(text).protocol)
  } catch {
    return false
  }
}, 'must be an absolute http(s) URL')

const profileSchema = z.strictObject({
  description: z.string().optional(),
  baseUrl: url.optional(),
  tasksUrl: url.optional(),
  storageProofUrl: url.optional(),
  authUrl: url.optional(),
})
export type Profile = z.infer<typeof profileSchema>

/** The names JavaScript objects carry by themselves: never a profile (see profiles.ts). */
const RESERVED_NAMES = ['__proto__', 'constructor', 'prototype']

const profileName = z
  .string()
  .regex(/^[A-Za-z0-9_.-]+$/, 'profile names are letters, digits, "_", "." or "-"')
  .refine((name) => !RESERVED_NAMES.includes(name), `a profile cannot be named ${RESERVED_NAMES.join(', ')}`)

export const configSchema = z.strictObject({
  $schema: z.string().optional(),
  defaultProfile: z.string().min(1).optional(),
  profiles: z.record(profileName, profileSchema).default({}),
})
