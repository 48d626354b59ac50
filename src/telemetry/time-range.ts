/** A half-open span of time, as every interval in the API is read. */
export interface TimeRange {
  /** ms since epoch, inclusive */
  start: number;
  /** ms since epoch, exclusive */
  end: number;
}
