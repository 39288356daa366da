/** Neumaier summation (mirrors native/core/compensated.h). */
export class CompensatedSum {
  sum = 0;
  error = 0;
  add(x: number): void {
    const t = this.sum + x;
    if (Math.abs(this.sum) >= Math.abs(x)) this.error += this.sum - t + x;
    else this.error += x - t + this.sum;
    this.sum = t;
  }
  merge(o: CompensatedSum): void {
    this.add(o.sum);
    this.add(o.error);
  }
  value(): number {
    return this.sum + this.error;
  }
}
