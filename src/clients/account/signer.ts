/**
 * The wallet side of the account service's sign-in: what signs the challenge, a signer over a
 * private key (viem's local account, imported on first use only), and the checks of a private
 * key and a wallet address, whose errors never quote the key.
 */
import { abortable as abortableBy } from '../../core/abortable.ts'
import { AbortedError, InvalidInputError } from '../../core/errors.ts'
import type { Eip712TypedData } from '../../schemas/account.ts'
import { WALLET_ADDRESS_PATTERN } from '../../schemas/account-constants.ts'

/** What signs the challenge: a viem `LocalAccount` fits, or anything with the same two members. */
export type TypedDataSigner = {
  address: string
  signTypedData(typedData: Eip712TypedData): Promise<string>
}

/**
 * A signer over a private key, with viem's local account (`privateKeyToAccount`), the one the
 * account client signs with. viem is imported on first use only.
 *
 * @param privateKey 32 bytes of hex, with or without 0x.
 * @returns `{ address, signTypedData }`.
 * @throws {InvalidInputError} When the key is not 32 bytes of hex, or not a valid secp256k1 key (the
 * message never quotes it).
 * @example
 * ```ts
 * import { AccountClient, localSigner } from 'proving-kit'
 *
 * const signer = await localSigner(process.env.WALLET_PRIVATE_KEY!)
 * const account = new AccountClient({ baseUrl: process.env.ACCOUNT_BASE_URL!, signer })
 * ```
 */
export async function localSigner(privateKey: string): Promise<TypedDataSigner> {
  const key = normalizePrivateKey(privateKey)
  const { privateKeyToAccount } = await import('viem/accounts')
  let account
  try {
    account = privateKeyToAccount(key)
  } catch {
    // viem's message could quote the key; this one does not.
    throw new InvalidInputError('The private key is not a valid secp256k1 key.', { input: 'privateKey' })
  }
  return {
    address: account.address,
    // Exactly the typed data given: domain, types (EIP712Domain included when present),
    // primaryType and message, untouched.
    signTypedData: (typedData) => account.signTypedData(typedData as Parameters<typeof account.signTypedData>[0]),
  }
}

/**
 * Checks a private key and writes it as viem takes it.
 *
 * @param value 64 hex digits, with or without 0x (either case).
 * @returns The key as `0x` and 64 lowercase digits.
 * @throws {InvalidInputError} When it is not 32 bytes of hex (the message never quotes it).
 * @example
 * ```ts
 * import { normalizePrivateKey } from 'proving-kit'
 *
 * const key = normalizePrivateKey(` ${'AB'.repeat(32)}\n`)
 * // 0xabab...ab
 * ```
 */
export function normalizePrivateKey(value: string): `0x${string}` {
  const text = typeof value === 'string' ? value.trim() : ''
  const hex = text.startsWith('0x') || text.startsWith('0X') ? text.slice(2) : text
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) {
    throw new InvalidInputError(
      `The private key must be 32 bytes of hex (64 digits, optionally 0x-prefixed); got ${text.length} characters that are not.`,
      { input: 'privateKey' },
    )
  }
  return `0x${hex.toLowerCase()}`
}

export function checkWallet(wallet: string): string {
  const address = typeof wallet === 'string' ? wallet.trim() : ''
  if (!WALLET_ADDRESS_PATTERN.test(address)) {
    throw new InvalidInputError(
      `The wallet must be a 0x-prefixed 20-byte hex address; got ${JSON.stringify(String(wallet).slice(0, 50))}.`,
      {
        input: 'wallet',
      },
    )
  }
  return address
}

/** Waits for `promise` unless `signal` aborts first (then an AbortedError); the promise itself runs on. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  return abortableBy(
    promise,
    signal,
    (reason) => new AbortedError('Cancelled while signing in to the account service.', { cause: reason }),
  )
}
