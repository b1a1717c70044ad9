import { useRef, useState } from 'react';
import { api } from '../api/client.js';
import { download } from '../lib/download.js';
import { countOf } from '../lib/format.js';
import { Outcome } from './Outcome.js';

/**
 * "Export settings" and "Import settings…": the settings with each
 * remembered network's choices, as one file (GET /api/settings/export, POST
 * /api/settings/import). Shown in Settings, where its words send people
 * (issue 29), and beside the networks whose choices it carries.
 */
export function SettingsTransfer({ lead, onImported }: { readonly lead: string; readonly onImported: () => void }) {
  const [note, setNote] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const fileInput = useRef<HTMLInputElement>(null);
  const exportSettings = (): void => {
    setError(null);
    api.exportSettings().then(
      (file) => {
        download(JSON.stringify(file, null, 2) + '\n', 'application/json', `dotstub-settings-${file.exportedAt.replace(/[:.]/g, '-')}.json`);
        setNote(`Exported your settings and your choices for ${countOf(file.networks.length, 'network')}.`);
      },
      (e: unknown) => setError(e instanceof Error ? e.message : String(e)),
    );
  };
  const importSettings = (file: File): void => {
    setError(null);
    setNote(null);
    file
      .text()
      .then((text) => {
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          throw new Error(`${file.name} is not a settings export (not JSON); nothing was changed`);
        }
        return api.importSettings(body);
      })
      .then(
        (r) => {
          const waiting = r.waiting > 0 ? ` ${r.waiting} more ${r.waiting === 1 ? 'is' : 'are'} for ${r.waiting === 1 ? 'a network' : 'networks'} this computer hasn't been on: kept, and used there the day it joins ${r.waiting === 1 ? 'it' : 'one'}.` : '';
          setNote(`Imported your settings and your choices for ${countOf(r.networks, 'network')}.${waiting}`);
          onImported();
        },
        (e: unknown) => setError(e instanceof Error ? e.message : String(e)),
      );
  };
  return (
    <>
      <div className="memory-transfer">
        <span className="muted small">{lead}</span>
        <button type="button" className="btn btn-small" onClick={exportSettings}>
          Export settings
        </button>
        <button type="button" className="btn btn-small" onClick={() => fileInput.current?.click()}>
          Import settings…
        </button>
        <input
          ref={fileInput}
          type="file"
          accept="application/json,.json"
          hidden
          aria-label="Settings file to import"
          onChange={(e) => {
            const f = e.target.files?.[0];
            if (f) importSettings(f);
            e.target.value = '';
          }}
        />
      </div>
      <Outcome note={note} error={error} />
    </>
  );
}
