/**
 * The facts a proof of a PIE registers, from its program hash (../hash/) and output
 * (../validate/): the SHARP fact, the Integrity fact and Integrity's verification hash.
 */
export {
  BOOTLOADER_PROGRAM_HASH,
  computeIntegrityFact,
  computeOutputRoot,
  computeSharpFact,
  computeVerificationHash,
  type VerifierSettings,
} from './facts.ts'
