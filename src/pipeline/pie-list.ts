import { glob, stat } from 'node:fs/promises'
import { InvalidInputError } from '../core/errors.ts'

const GLOB_CHARACTERS = /[*?[\]{}]/

/**
 * The PIEs a command was given: each argument is a pie.zip, a PIE directory, or a glob (quoted,
 * so the shell leaves it alone: 'build/**\/pie.zip'), expanded here in sorted order. A glob
 * that matches nothing is refused before anything is sent. The same PIE named twice (the same
 * path spelt twice, a link, a copy) keeps its rows: the batch submits each PIE digest once and
 * reports that query on every row naming it.
 */
export async function expandPieArguments(args: readonly string[], name = '<pie>'): Promise<string[]> {
  const paths: string[] = []
  for (const arg of args) {
    const text = arg.trim()
    if (!text)
      throw new InvalidInputError(`${name}: an empty path; give a pie.zip, a PIE directory or a glob.`, { input: name })
    if (await exists(text)) {
      paths.push(text)
      continue
    }
    if (!GLOB_CHARACTERS.test(text)) {
      throw new InvalidInputError(
        `${name}: nothing at ${text}; give a pie.zip or a PIE directory (or a glob). Nothing was sent.`,
        { input: name },
      )
    }
    const matches: string[] = []
    for await (const match of glob(text)) matches.push(match)
    if (matches.length === 0) {
      throw new InvalidInputError(
        `${name}: the pattern ${JSON.stringify(text)} matches no file or directory; check it (quote it so the shell does not expand it).`,
        {
          input: name,
        },
      )
    }
    paths.push(...matches.sort())
  }
  return paths
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path)
    return true
  } catch {
    return false
  }
}
