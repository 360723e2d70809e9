// e2e/support/crd-yaml owns the manifest of a namespaced, one-version custom resource definition
// as the kubectl tests apply it: the tests differ only in names, the version's schema properties
// and what follows the schema (printer columns), so the rest of the manifest is written here once.

export interface CrdYamlOptions {
  /** The API group of CustomResourceDefinition itself (apiextensions.k8s.io, or the cluster naming's). */
  apiextensions?: string;
  group: string;
  plural: string;
  kind: string;
  shortNames?: readonly string[];
  /** The YAML of openAPIV3Schema's `properties` mapping, indented from column 0. */
  properties: string;
  /** YAML appended to the version entry (e.g. additionalPrinterColumns), indented from column 0. */
  versionExtra?: string;
}

const indent = (yaml: string, by: number): string =>
  yaml.replace(/\n+$/, '').split('\n').map((line) => (line === '' ? line : ' '.repeat(by) + line)).join('\n');

export function crdYaml(o: CrdYamlOptions): string {
  const singular = o.kind.toLowerCase();
  const short = o.shortNames?.length ? `, shortNames: [${o.shortNames.join(', ')}]` : '';
  return `apiVersion: ${o.apiextensions ?? 'apiextensions.k8s.io'}/v1
kind: CustomResourceDefinition
metadata:
  name: ${o.plural}.${o.group}
spec:
  group: ${o.group}
  scope: Namespaced
  names: {plural: ${o.plural}, singular: ${singular}, kind: ${o.kind}${short}}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
${indent(o.properties, 10)}
${o.versionExtra ? `${indent(o.versionExtra, 4)}\n` : ''}`;
}
