/**
 * A takeover is a list of steps: plain data, so it can be journaled before
 * anything changes, shown to the user, and tested without running it.
 *
 * - `file`: make a file be `after`; undo makes it `before` again (the bytes
 *   or symlink target read just before the journal was written).
 * - `reload`: tell a service to re-read its configuration (resolved,
 *   NetworkManager). Its undo is the same reload, run after every file step
 *   has been undone, so the service reads the restored files.
 * - `command`: a program with arguments and its inverse (macOS and Windows
 *   plans; run there only).
 *
 * Invariant: undoing a step that never ran is harmless — a file step's undo
 * writes the state the file had when the journal was written — so restore
 * may undo a step that was started but not confirmed (a crash mid-step).
 */
import type { FileState } from './file-state.js';

export type ReloadTarget = 'systemd-resolved' | 'NetworkManager';

export type Step =
  | { readonly kind: 'file'; readonly path: string; readonly before: FileState; readonly after: FileState; readonly why: string }
  | { readonly kind: 'reload'; readonly target: ReloadTarget; readonly why: string }
  | {
      readonly kind: 'command';
      readonly run: readonly string[];
      readonly undo: readonly (readonly string[])[];
      /** Undo after every other step is undone (cache flushes), like reloads. */
      readonly undoLast?: boolean;
      readonly why: string;
    };

/** Where a journaled step got to. `started`: written to the journal as about to run; it may or may not have. */
export type StepProgress = 'pending' | 'started' | 'applied';

export function describeStep(step: Step): string {
  switch (step.kind) {
    case 'file':
      return `${step.after.type === 'absent' ? 'remove' : 'write'} ${step.path} (${step.why})`;
    case 'reload':
      return `reload ${step.target} (${step.why})`;
    case 'command':
      return `${step.run.join(' ')} (${step.why})`;
  }
}
