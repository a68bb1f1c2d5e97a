/**
 * One configuration for the four services: named profiles, each with the address of the proving
 * service, the task service, the storage-proof service and the account service, so one set-up
 * serves `prove`, `task`, `storage` and `auth`. A profile comes from `--profile`, else
 * PROVING_PROFILE, else the config file's `defaultProfile`. Flags and the per-service variables
 * (PROVING_BASE_URL, ...) still win over the profile; a variable that overrides a profile named
 * with `--profile` is said on stderr (context.ts). Only the file's and the built-in profiles are
 * profiles: `constructor`, `toString` and `__proto__` are not (own properties only).
 *
 * The config file: PROVING_CONFIG, else $XDG_CONFIG_HOME/proving/config.json, else
 * ~/.config/proving/config.json. JSON:
 *
 *   { "defaultProfile": "staging",
 *     "profiles": { "production": { "baseUrl": "https://...", "tasksUrl": "https://...",
 *                                   "storageProofUrl": "https://...", "authUrl": "https://..." },
 *                   "staging": { ... } } }
 *
 * Built in (a file's profile of the same name replaces it): `local`, every service on the
 * emulator's default address, http://127.0.0.1:8790 (`proving emulator`).
 */
import { readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { InvalidInputError } from '../core/errors.ts'
import type { Profile } from './profile-schema.ts'

export type { Profile } from './profile-schema.ts'

export const PROFILE_FIELDS = {
  baseUrl: { env: 'PROVING_BASE_URL', flag: 'base-url', service: 'proving service' },
  tasksUrl: { env: 'PROVING_TASKS_URL', flag: 'tasks-url', service: 'task service' },
  storageProofUrl: { env: 'PROVING_STORAGE_PROOF_URL', flag: 'storage-proof-url', service: 'storage-proof service' },
  authUrl: { env: 'PROVING_AUTH_URL', flag: 'auth-url', service: 'account service' },
} as const

export type ProfileField = keyof typeof PROFILE_FIELDS

export const EMULATOR_URL = 'http://127.0.0.1:8790'
export const BUILT_IN_PROFILES: Record<string, Profile> = {
  local: {
    description: 'The built-in emulator at its default address (`proving emulator`): every service on one port.',
    baseUrl: EMULATOR_URL,
    tasksUrl: EMULATOR_URL,
    storageProofUrl: EMULATOR_URL,
    authUrl: EMULATOR_URL,
  },
}

export function configPath(env: NodeJS.ProcessEnv): string {
  if (env.PROVING_CONFIG) return env.PROVING_CONFIG
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config')
  return join(base, 'proving', 'config.json')
}

export type LoadedConfig = {
  path: string
  /** Whether the file exists. */
  found: boolean
  defaultProfile: string | undefined
  profiles: Record<string, Profile & { source: 'file' | 'built-in' }>
}

/** Reads the config file (absent: the built-in profiles only); a broken file is refused, naming it. */
export async function loadConfig(env: NodeJS.ProcessEnv): Promise<LoadedConfig> {
  const path = configPath(env)
  let text: string | undefined
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'ENOENT' || env.PROVING_CONFIG) {
      throw new InvalidInputError(
        code === 'ENOENT'
          ? `PROVING_CONFIG names ${path}, which does not exist; create it or unset PROVING_CONFIG.`
          : `Cannot read the config file ${path} (${code}); check its permissions.`,
        { input: 'PROVING_CONFIG' },
      )
    }
  }
  // No prototype: a name is a profile only if the file or the built-ins define it (`constructor`
  // and `toString` are not profiles), and `__proto__` cannot reach one.
  const profiles: LoadedConfig['profiles'] = Object.assign(
    Object.create(null) as LoadedConfig['profiles'],
    Object.fromEntries(
      Object.entries(BUILT_IN_PROFILES).map(([name, profile]) => [name, { ...profile, source: 'built-in' as const }]),
    ),
  )
  if (text === undefined) return { path, found: false, defaultProfile: undefined, profiles }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new InvalidInputError(
      `The config file ${path} is not valid JSON (${(error as Error).message}); fix it or set PROVING_CONFIG to another file.`,
      {
        input: 'PROVING_CONFIG',
      },
    )
  }
  // zod loads only for a config file: a command without one starts without it.
  const { configSchema } = await import('./profile-schema.ts')
  const parsed = configSchema.safeParse(json)
  if (!parsed.success) {
    // A refused profile name says why ("cannot be named constructor"), not only "Invalid key".
    const problems = parsed.error.issues.map(
      (issue) =>
        `${issue.path.join('.') || '(top)'}: ${issue.code === 'invalid_key' ? (issue.issues[0]?.message ?? issue.message) : issue.message}`,
    )
    throw new InvalidInputError(
      `The config file ${path} has ${problems.length === 1 ? 'a problem' : `${problems.length} problems`}: ${problems.join('; ')}.`,
      {
        input: 'PROVING_CONFIG',
      },
    )
  }
  for (const [name, profile] of Object.entries(parsed.data.profiles)) profiles[name] = { ...profile, source: 'file' }
  return { path, found: true, defaultProfile: parsed.data.defaultProfile, profiles }
}

export type ActiveProfile = { name: string; profile: Profile; chosenBy: string; configPath: string } | undefined

/** The profile in force: --profile, PROVING_PROFILE, or the file's defaultProfile; none otherwise. */
export async function activeProfile(flag: string | undefined, env: NodeJS.ProcessEnv): Promise<ActiveProfile> {
  const fromFlag = flag?.trim()
  const fromEnv = env.PROVING_PROFILE?.trim()
  // The file is read only when a profile may be in force.
  if (!fromFlag && !fromEnv && !env.PROVING_CONFIG && !mayHaveConfig(env)) return undefined
  const config = await loadConfig(env)
  const name = fromFlag || fromEnv || config.defaultProfile
  if (!name) return undefined
  const chosenBy = fromFlag ? '--profile' : fromEnv ? 'PROVING_PROFILE' : `defaultProfile in ${config.path}`
  const profile = Object.hasOwn(config.profiles, name) ? config.profiles[name] : undefined
  if (!profile) {
    const known = Object.keys(config.profiles).sort()
    throw new InvalidInputError(
      `No profile ${JSON.stringify(name)} (from ${chosenBy}): known profiles are ${known.join(', ')}${config.found ? ` (${config.path})` : `; define others in ${config.path}`}.`,
      { input: fromFlag ? '--profile' : 'PROVING_PROFILE' },
    )
  }
  return { name, profile, chosenBy, configPath: config.path }
}

function mayHaveConfig(env: NodeJS.ProcessEnv): boolean {
  try {
    readFileSync(configPath(env))
    return true
  } catch {
    return false
  }
}

/** The profile's value for an option read from one of the services' variables, if any. */
export function profileValueFor(active: ActiveProfile, envName: string | undefined): string | undefined {
  if (!active || !envName) return undefined
  for (const [field, spec] of Object.entries(PROFILE_FIELDS)) {
    if (spec.env === envName) return active.profile[field as ProfileField]
  }
  return undefined
}

/** A service's address that no flag, variable or profile gave: every way to give one, in one line. */
export function missingAddressError(field: ProfileField, alternative?: string): InvalidInputError {
  const { service, flag, env } = PROFILE_FIELDS[field]
  const or = alternative ? `; ${alternative}` : ''
  return new InvalidInputError(
    `No ${service} address: pass --${flag} <url> or set ${env}, or choose a profile that has one with PROVING_PROFILE or --profile (\`proving config show\` lists them)${or}.`,
    { input: `--${flag}` },
  )
}
