// Provenance says which provisioning client (SCIM) created or changed a
// department or a role, and the id it knows it by (externalId); nothing
// for one SCIM never touched.
import { Typography } from '@mui/material';

// provenanceFields are the fields Provenance shows, of a Department or a Role.
export const provenanceFields = 'externalId provisionedBy';

export function Provenance({ object, testid }) {
  if (!object?.provisionedBy) return null;
  return (
    <Typography
      variant="body2"
      color="text.secondary"
      data-testid={testid}
      data-client={object.provisionedBy}
      data-external-id={object.externalId ?? ''}
    >
      {`Provisioned by ${object.provisionedBy}${object.externalId ? ` (externalId ${object.externalId})` : ''}`}
    </Typography>
  );
}
