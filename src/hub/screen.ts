// A server-side terminal emulator that folds every Output byte in, to cut vt100-screen-state-v1 snapshots.
import xterm from '@xterm/headless';
import serialize from '@xterm/addon-serialize';
import type { OutputBacklog } from './output-backlog.ts';

export interface ScreenSnapshot {
  snapshot: string;
  cols: number;
  rows: number;
  /** Sequence of the latest Output/Resize folded in. */
  anchor: number;
}

type Terminal = InstanceType<typeof xterm.Terminal>;

export class ScreenModel {
  private readonly term: Terminal;
  private readonly ser: InstanceType<typeof serialize.SerializeAddon>;
  private anchor = 0;

  constructor(
    cols: number,
    rows: number,
    private readonly backlog?: OutputBacklog,
  ) {
    this.term = new xterm.Terminal({ cols, rows, scrollback: 0, allowProposedApi: true });
    this.ser = new serialize.SerializeAddon();
    this.term.loadAddon(this.ser as unknown as Parameters<Terminal['loadAddon']>[0]);
  }

  write(data: Uint8Array, sequence: number): void {
    const backlog = this.backlog;
    if (backlog) {
      backlog.add(data.byteLength);
      this.term.write(data, () => backlog.done(data.byteLength));
    } else {
      this.term.write(data);
    }
    this.anchor = sequence;
  }

  resize(cols: number, rows: number, sequence: number): void {
    this.term.resize(cols, rows);
    this.anchor = sequence;
  }

  /**
   * Resolves once every byte written so far is parsed, with a snapshot of exactly that state:
   * xterm runs a write callback right after its chunk, before any chunk written later.
   */
  snapshot(): Promise<ScreenSnapshot> {
    const anchor = this.anchor;
    return new Promise((resolve) => {
      this.term.write('', () => {
        resolve({ snapshot: this.ser.serialize(), cols: this.term.cols, rows: this.term.rows, anchor });
      });
    });
  }
}
