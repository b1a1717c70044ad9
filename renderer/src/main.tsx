import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.js';
import { setToken } from './api/client.js';
import { signIn, TOKEN_KEY } from './lib/session.js';
import { StoreContext } from './state/context.js';
import { DashboardStore } from './state/store.js';
import './styles.css';

function storedToken(): string | null {
  try {
    return window.sessionStorage.getItem(TOKEN_KEY);
  } catch {
    // Storage disabled: the token lives in memory for this page only.
    return null;
  }
}

/** Reads the sign-in link (or this tab's saved token), saves it, and takes the token out of the address bar. */
function readSignIn(): ReturnType<typeof signIn> {
  const s = signIn(window.location.hash, storedToken());
  if (s.hash !== null) window.history.replaceState(window.history.state, '', `${window.location.pathname}${window.location.search}${s.hash}`);
  if (s.kind === 'token' && s.store) {
    try {
      window.sessionStorage.setItem(TOKEN_KEY, s.token);
    } catch {
      // See storedToken().
    }
  }
  return s;
}

const first = readSignIn();
// A new link pasted into this tab only changes the fragment (no reload): sign in with it.
window.addEventListener('hashchange', () => {
  if (!window.location.hash.startsWith('#token=')) return;
  readSignIn();
  window.location.reload();
});

const store = new DashboardStore();
if (first.kind === 'token') {
  setToken(first.token);
  store.start();
} else {
  store.signedOut(first.kind);
}

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root');
createRoot(root).render(
  <StrictMode>
    <StoreContext.Provider value={store}>
      <App />
    </StoreContext.Provider>
  </StrictMode>,
);
