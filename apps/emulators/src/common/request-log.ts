import type { EmulatedService } from './faults';

export interface LoggedRequest {
  at: string;
  service: EmulatedService;
  method: string;
  path: string;
  status: number;
  account: string | null;
}

/** Every data-plane request, so tests can assert what a client really sent. */
export class RequestLog {
  private entries: LoggedRequest[] = [];

  record(entry: LoggedRequest): void {
    this.entries.push(entry);
  }

  list(filter: { service?: string; account?: string } = {}): LoggedRequest[] {
    return this.entries.filter(
      (e) =>
        (filter.service === undefined || e.service === filter.service) &&
        (filter.account === undefined || e.account === filter.account),
    );
  }

  clear(): void {
    this.entries = [];
  }
}
