/**
 * Reading a PIE whatever its container: a pie.zip on disk, a zip's bytes, or a PIE directory
 * (`openPie`), the zip's entries inflated and CRC-checked as they are streamed. The first step
 * of a PIE's path: the container's problems are found here, its files' contents are checked by
 * ../validate/.
 */
export {
  SIG_CENTRAL,
  SIG_EOCD,
  SIG_LOCAL,
  SIG_ZIP64_EOCD,
  SIG_ZIP64_LOCATOR,
  ZIP64_EXTRA_ID,
  ZipFormatError,
} from './zip.ts'
export { listPieDir, type PieDirFile } from './directory.ts'
export { openPie, type PieEntrySummary, type PieInput, type PieSource } from './source.ts'
