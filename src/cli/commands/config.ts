import { defineCommand, PROFILE_OPTION } from '../context.ts'
import { EXIT } from '../exit-codes.ts'
import { activeProfile, configPath, loadConfig, PROFILE_FIELDS, type ProfileField } from '../profiles.ts'

/**
 * `proving config ...`: where the services' addresses come from. Profiles (production, staging,
 * your own) live in one JSON file; src/cli/profiles.ts describes it, examples/proving-config.json
 * is one to start from.
 */
export const configShow = defineCommand({
  path: ['config', 'show'],
  summary: "Show the profiles, the one in force, and where each service's address comes from.",
  details: [
    'The config file is PROVING_CONFIG, else $XDG_CONFIG_HOME/proving/config.json',
    '(~/.config/proving/config.json):',
    '  { "defaultProfile": "staging", "profiles": { "staging": { "baseUrl": "https://...",',
    '    "tasksUrl": "https://...", "storageProofUrl": "https://...", "authUrl": "https://..." } } }',
    'A profile is chosen by --profile, else PROVING_PROFILE, else defaultProfile; flags and',
    'PROVING_BASE_URL, PROVING_TASKS_URL, PROVING_STORAGE_PROOF_URL and PROVING_AUTH_URL override it.',
    'Built in: `local` (the emulator at http://127.0.0.1:8790).',
  ],
  positionals: { min: 0, max: 0 },
  options: { ...PROFILE_OPTION },
  async run(context) {
    const env = context.io.env
    const config = await loadConfig(env)
    const active = await activeProfile(context.values.profile, env)
    const services = Object.entries(PROFILE_FIELDS).map(([field, spec]) => {
      const fromEnv = env[spec.env]?.trim()
      const fromProfile = active?.profile[field as ProfileField]
      return {
        service: spec.service,
        url: fromEnv || fromProfile || null,
        from: fromEnv ? spec.env : fromProfile ? `profile ${active!.name}` : null,
        flag: `--${spec.flag}`,
      }
    })
    const json = {
      configPath: config.path,
      configFound: config.found,
      profile: active ? { name: active.name, chosenBy: active.chosenBy } : null,
      services,
      profiles: Object.fromEntries(Object.entries(config.profiles).map(([name, profile]) => [name, profile])),
    }
    const lines = [
      `Config file: ${config.path}${config.found ? '' : ' (none: only the built-in profiles)'}`,
      `Profile in force: ${active ? `${active.name} (from ${active.chosenBy})` : 'none (set PROVING_PROFILE or pass --profile)'}`,
      '',
      ...services.map(
        (row) =>
          `${row.service.padEnd(23)}${(row.url ?? '(not set)').padEnd(40)}${row.from ? `from ${row.from}` : `set ${row.flag} or a profile`}`,
      ),
      '',
      'Profiles:',
      ...Object.entries(config.profiles).map(
        ([name, profile]) =>
          `  ${name.padEnd(12)}${profile.source === 'built-in' ? '(built in) ' : ''}${profile.description ?? profile.baseUrl ?? ''}`,
      ),
    ]
    context.print(lines.join('\n'), json)
    return EXIT.ok
  },
})

export const configPathCommand = defineCommand({
  path: ['config', 'path'],
  summary: 'Print where the config file is read from (PROVING_CONFIG or ~/.config/proving/config.json).',
  positionals: { min: 0, max: 0 },
  options: {},
  async run(context) {
    const path = configPath(context.io.env)
    context.print(path, { configPath: path })
    return EXIT.ok
  },
})
