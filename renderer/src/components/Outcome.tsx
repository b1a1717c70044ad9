/** What an action just did, said where it was done: a status line when it worked, an alert when it didn't. */
export function Outcome({ note, error }: { readonly note: string | null; readonly error: string | null }) {
  return (
    <>
      {note && (
        <p role="status" className="good-text small">
          {note}
        </p>
      )}
      {error && (
        <p role="alert" className="error-text">
          {error}
        </p>
      )}
    </>
  );
}
