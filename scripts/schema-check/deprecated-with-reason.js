// A graphql-inspector diff rule (scripts/schema-check.sh passes it with
// --rule): a breaking change to an element that the old schema (the last
// release's, schema/releases/) marked @deprecated with an explicit reason
// becomes dangerous, so the diff passes; every other breaking change stays
// breaking. The element is the one the change's path names: a field, an
// input field, an argument ("Type.field.arg") or an enum value. Types
// cannot be deprecated in GraphQL, so removing a type stays breaking.
'use strict';

const { isEnumType, isInputObjectType, isInterfaceType, isObjectType } = require('graphql');

// element returns the old schema's definition at path ("Type",
// "Type.field", "Type.field.arg", "Enum.VALUE"), or undefined.
function element(schema, path) {
  const [typeName, member, arg] = path.split('.');
  const type = schema.getType(typeName);
  if (!type || member === undefined) return undefined;
  if (isEnumType(type)) return arg === undefined ? type.getValue(member) : undefined;
  if (!isObjectType(type) && !isInterfaceType(type) && !isInputObjectType(type)) return undefined;
  const field = type.getFields()[member];
  if (!field || arg === undefined) return field;
  return (field.args || []).find((a) => a.name === arg);
}

// reason returns the reason: argument of the element's @deprecated as
// written in the SDL, or '' when it has none (a bare @deprecated gets the
// default reason, which says nothing to a client).
function reason(el) {
  const dir = el && el.astNode && (el.astNode.directives || []).find((d) => d.name.value === 'deprecated');
  const arg = dir && (dir.arguments || []).find((a) => a.name.value === 'reason');
  return arg && arg.value.kind === 'StringValue' ? arg.value.value.trim() : '';
}

module.exports = function deprecatedWithReason({ changes, oldSchema }) {
  return changes.map((change) => {
    if (change.criticality.level !== 'BREAKING' || !change.path) return change;
    const why = reason(element(oldSchema, change.path));
    if (!why) return change;
    return {
      ...change,
      message: `${change.message} (deprecated in the release: ${why})`,
      criticality: { ...change.criticality, level: 'DANGEROUS' },
    };
  });
};
