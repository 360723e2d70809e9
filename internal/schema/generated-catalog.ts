// internal/schema/generated-catalog owns the shape of proto/api-resources.json: written by
// tools/gen-schemas, read by the catalog. One definition for both sides of the file.
// Imports: nothing from the project.

export interface GeneratedSubresource {
  name: string;
  verbs: string[];
  group: string;
  version: string;
  kind: string;
}

export interface GeneratedResource {
  name: string;
  singularName: string;
  kind: string;
  listKind?: string;
  namespaced: boolean;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  /** Component schema name of the kind (absent for kinds without one). */
  schema?: string;
  subresources: GeneratedSubresource[];
}

export interface GeneratedGroupVersion {
  group: string;
  version: string;
  resources: GeneratedResource[];
}

export interface GeneratedCatalog {
  _generated?: string;
  groupVersions: GeneratedGroupVersion[];
}
