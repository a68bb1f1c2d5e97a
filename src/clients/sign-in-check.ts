import { InvalidResponseError } from '../core/errors.ts'
import type { ChallengeResponse, Eip712TypedData } from '../schemas/account.ts'

/**
 * What a wallet may sign when it signs in: an allow-list, not a deny-list. A CI private key
 * must never sign typed data that a contract would honour (an EIP-3009 transfer authorization,
 * a Permit, a Safe transaction, an ERC-2771 forward request, an order): every one of those is
 * bound to a contract (`verifyingContract`), moves a value to an address, or carries calldata or
 * a nested struct. A sign-in message binds this wallet and this challenge, and nothing else.
 *
 * Rules (each failure is listed, then nothing is signed):
 * - the domain holds only `name`, `version`, `chainId` (no `verifyingContract`, no `salt`);
 *   `name` and `chainId` are the expected ones (the service's documented values by default);
 * - the types are `EIP712Domain` (matching the domain) and the primary type only: no nested
 *   struct, no array, no `bytes` (calldata), only string, bool, address, uintN/intN, bytes1..32;
 * - exactly one address, and it is the signing wallet;
 * - integers only for times and nonces (an integer called `value`, `amount`, ... beside an
 *   address is a transfer);
 * - the message has exactly the primary type's fields, and one of them carries the challenge's
 *   nonce (or its token);
 * - the primary type's name is not one of the value-moving kinds (permit, transfer, order, ...).
 */

/** The sign-in domain the account service documents (docs/emulator.md, "Account service"). */
export const DEFAULT_SIGN_IN_DOMAIN = { name: 'Proving Account Service', chainId: 1 } as const

/** Largest challenge answer read (bytes); a bigger one is refused before it is parsed. */
export const MAX_CHALLENGE_BYTES = 64 * 1024

/**
 * The sign-in domain an {@link AccountClient} accepts: any challenge with another is refused
 * unsigned. The service's documented values by default.
 */
export type SignInExpectation = {
  /** The domain `name` the account service signs in with. */
  domainName?: string | undefined
  /** The domain `chainId` (a number, or a decimal or 0x string). */
  chainId?: number | string | bigint | undefined
}

/** A challenge the client will not sign; `problems` lists every rule it broke. */
export class UnsafeChallengeError extends InvalidResponseError {
  override name = 'UnsafeChallengeError'
  /** Every rule the challenge broke, one line each. */
  readonly problems: readonly string[]
  constructor(problems: string[]) {
    super(
      `Refused to sign the sign-in challenge: ${problems.join('; ')}. Nothing was signed; this is not a sign-in message (a wrong address for the account service, or a hostile service).`,
      { nextStep: { kind: 'show-challenge' } },
    )
    this.problems = problems
  }
}

const SIMPLE_TYPE =
  /^(string|bool|address|u?int(8|16|24|32|40|48|56|64|72|80|88|96|104|112|120|128|136|144|152|160|168|176|184|192|200|208|216|224|232|240|248|256)?|bytes([1-9]|[12]\d|3[0-2]))$/
const INTEGER_TYPE = /^u?int\d*$/
/** Integers a sign-in message may carry: times and nonces. */
const INTEGER_NAME =
  /^(nonce|issuedAt|issued_at|expiresAt|expires_at|expirationTime|expiration|notBefore|not_before|timestamp|iat|exp|nbf|version|chainId)$/i
const VALUE_MOVING =
  /permit|order|transfer|approv|delegat|withdraw|swap|authoriz|safetx|forward|transaction|execut|deposit|payment|call|bid|sell|buy|mint|burn/i
const DOMAIN_FIELDS = new Set(['name', 'version', 'chainId'])
const MAX_STRING = 2_048

/** Every rule a challenge breaks (empty when it is a plain sign-in for `wallet`). */
export function signInProblems(
  challenge: ChallengeResponse,
  wallet: string,
  expected: SignInExpectation = {},
): string[] {
  const typedData: Eip712TypedData = challenge.eip712
  const problems: string[] = []
  const domain = typedData.domain
  const domainName = expected.domainName ?? DEFAULT_SIGN_IN_DOMAIN.name
  const chainId = toBigInt(expected.chainId ?? DEFAULT_SIGN_IN_DOMAIN.chainId)

  if ('verifyingContract' in domain)
    problems.push(`the domain names a contract (verifyingContract ${short(domain.verifyingContract)})`)
  for (const key of Object.keys(domain)) {
    if (!DOMAIN_FIELDS.has(key) && key !== 'verifyingContract')
      problems.push(`the domain has an unexpected field "${clean(key)}"`)
  }
  if (domain.name !== domainName) problems.push(`the domain name is ${short(domain.name)}, not "${domainName}"`)
  const actualChain = toBigInt(domain.chainId)
  if (actualChain === undefined || actualChain !== chainId) {
    problems.push(`the domain chainId is ${short(domain.chainId)}, not ${String(chainId)}`)
  }

  const typeNames = Object.keys(typedData.types)
  const primary = typedData.primaryType
  if (VALUE_MOVING.test(primary)) problems.push(`the message is a "${clean(primary)}", a kind that moves value`)
  const others = typeNames.filter((name) => name !== 'EIP712Domain' && name !== primary)
  if (others.length) problems.push(`it declares other struct types (${others.slice(0, 5).map(clean).join(', ')})`)
  const domainType = typedData.types.EIP712Domain
  if (domainType) {
    const declared = domainType
      .map((field) => field.name)
      .sort()
      .join(',')
    const present = Object.keys(domain).sort().join(',')
    if (declared !== present)
      problems.push(`the EIP712Domain type (${clean(declared)}) does not match the domain (${clean(present)})`)
  }
  const fields = typedData.types[primary]
  if (!fields) {
    problems.push(`the primary type "${clean(primary)}" is not declared`)
    return problems
  }
  const fieldNames = new Set(fields.map((field) => field.name))
  const addresses: string[] = []
  for (const field of fields) {
    const type = field.type
    if (!SIMPLE_TYPE.test(type)) {
      problems.push(
        type.endsWith(']')
          ? `field "${clean(field.name)}" is an array (${short(type)})`
          : type === 'bytes'
            ? `field "${clean(field.name)}" carries bytes (calldata)`
            : `field "${clean(field.name)}" has type ${short(type)}, not a plain value`,
      )
      continue
    }
    const value = typedData.message[field.name]
    if (type === 'address') {
      addresses.push(field.name)
      if (typeof value !== 'string' || value.toLowerCase() !== wallet.toLowerCase()) {
        problems.push(`field "${clean(field.name)}" is the address ${short(value)}, not this wallet ${wallet}`)
      }
    } else if (INTEGER_TYPE.test(type) && !INTEGER_NAME.test(field.name)) {
      problems.push(`field "${clean(field.name)}" is an amount-like integer (${type})`)
    } else if (typeof value === 'string' && value.length > MAX_STRING) {
      problems.push(`field "${clean(field.name)}" is ${value.length} characters long`)
    }
  }
  if (addresses.length === 0) problems.push('the message does not name this wallet')
  if (addresses.length > 1)
    problems.push(
      `the message names ${addresses.length} addresses (${addresses.map(clean).join(', ')}): an address beside this wallet`,
    )
  const extra = Object.keys(typedData.message).filter((key) => !fieldNames.has(key))
  if (extra.length)
    problems.push(`the message has fields its type does not declare (${extra.slice(0, 5).map(clean).join(', ')})`)
  const missing = [...fieldNames].filter((name) => !(name in typedData.message))
  if (missing.length) problems.push(`the message lacks declared fields (${missing.slice(0, 5).map(clean).join(', ')})`)

  const binders = [challenge.nonce, challenge.challengeToken].filter(
    (value): value is string => typeof value === 'string' && value.length > 0,
  )
  const values = Object.values(typedData.message).filter((value): value is string => typeof value === 'string')
  const carries = (value: string, binder: string) => value === binder || (binder.length >= 8 && value.includes(binder))
  if (!binders.some((binder) => values.some((value) => carries(value, binder)))) {
    problems.push("no field carries the challenge's nonce or token (it is not bound to this challenge)")
  }
  return problems
}

/** Throws `UnsafeChallengeError` unless the challenge is a plain sign-in for `wallet`. */
export function assertSignInOnly(challenge: ChallengeResponse, wallet: string, expected: SignInExpectation = {}): void {
  const problems = signInProblems(challenge, wallet, expected)
  if (problems.length) throw new UnsafeChallengeError(problems)
}

function toBigInt(value: unknown): bigint | undefined {
  try {
    if (typeof value === 'bigint') return value
    if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value)
    if (typeof value === 'string' && /^(0x[0-9a-fA-F]{1,64}|\d{1,78})$/.test(value.trim())) return BigInt(value.trim())
  } catch {
    // not a chain id
  }
  return undefined
}

/** A value quoted in a message: short, one line. */
function short(value: unknown): string {
  let text: string
  try {
    text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value))
  } catch {
    text = String(value)
  }
  text = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?')
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

/** A name quoted in a message: short, one line, printable. */
function clean(value: unknown): string {
  const text = String(value).replace(/[\u0000-\u001f\u007f-\u009f]/g, '?')
  return text.length > 40 ? `${text.slice(0, 37)}...` : text
}
