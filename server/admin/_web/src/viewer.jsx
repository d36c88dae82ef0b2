// The viewer: who is logged in and which permissions they hold, learnt
// from their own roles (Query.me: a user sees their own roles and each
// role's permissions). The views read it through useViewer() and offer
// only the controls the viewer may use; the gateway decides all the same
// (FORBIDDEN), this only spares the viewer buttons that would be refused.
import { createContext, useContext } from 'react';
import { gql } from './api.js';

// viewerQuery asks for the viewer with their roles' permissions.
const viewerQuery = `query ConsoleViewer {
  me { id username rank roles { role { id name permissions } priority } }
}`;

// loadViewer returns the viewer ({id, username, rank, roles, permissions}):
// permissions is the Set of every permission one of their roles grants.
export async function loadViewer() {
  const d = await gql(viewerQuery);
  if (!d.me) throw new Error('The gateway does not know the viewer: log in again.');
  const held = new Set(d.me.roles.flatMap(r => r.role.permissions));
  return { ...d.me, permissions: held };
}

// can tells whether viewer holds permission (ADMINISTRATOR implies every
// other); false while the viewer is not known.
export function can(viewer, permission) {
  if (!viewer) return false;
  return viewer.permissions.has('ADMINISTRATOR') || viewer.permissions.has(permission);
}

const ViewerContext = createContext(null);

// ViewerProvider gives its children the viewer (null while unknown).
export const ViewerProvider = ViewerContext.Provider;

// useViewer returns {viewer, can(permission)}.
export function useViewer() {
  const viewer = useContext(ViewerContext);
  return { viewer, can: p => can(viewer, p) };
}
