/**
 * The REST client, through @actions/github (Octokit with the REST methods and pagination). Only
 * the GitHub features (`release-tag`, `pr-comment`, `check-run`) load this module, so a step
 * without them never reads Octokit.
 */
import { getOctokit } from '@actions/github'
import type { GitHubContext } from './context.ts'

export type GitHub = ReturnType<typeof getOctokit>

export function gitHubClient(token: string, context: GitHubContext): GitHub {
  return getOctokit(token, { baseUrl: context.apiUrl })
}
