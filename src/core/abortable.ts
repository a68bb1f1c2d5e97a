/**
 * Waits for `promise` unless `signal` aborts first; the promise itself runs on (others may wait
 * for it too). The rejection on abort is `failure(signal.reason)`: the reason itself by default.
 */
export function abortable<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  failure: (reason: unknown) => unknown = (reason) => reason,
): Promise<T> {
  if (!signal) return promise
  if (signal.aborted) return Promise.reject(failure(signal.reason))
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(failure(signal.reason))
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}
