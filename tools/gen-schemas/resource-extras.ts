// Discovery facts that the OpenAPI documents do not carry: short names and categories as the
// upstream API server publishes them. Keyed by "<upstream group>/<resource>" ("" = core).
// This is authored data, read only by the generator.

export interface ResourceExtras {
  shortNames?: string[];
  categories?: string[];
}

export const resourceExtras: Record<string, ResourceExtras> = {
  '/pods': { shortNames: ['po'], categories: ['all'] },
  '/services': { shortNames: ['svc'], categories: ['all'] },
  '/namespaces': { shortNames: ['ns'] },
  '/nodes': { shortNames: ['no'] },
  '/configmaps': { shortNames: ['cm'] },
  '/serviceaccounts': { shortNames: ['sa'] },
  '/endpoints': { shortNames: ['ep'] },
  '/events': { shortNames: ['ev'] },
  '/persistentvolumes': { shortNames: ['pv'] },
  '/persistentvolumeclaims': { shortNames: ['pvc'] },
  '/replicationcontrollers': { shortNames: ['rc'], categories: ['all'] },
  '/resourcequotas': { shortNames: ['quota'] },
  '/limitranges': { shortNames: ['limits'] },
  '/componentstatuses': { shortNames: ['cs'] },
  'apps/deployments': { shortNames: ['deploy'], categories: ['all'] },
  'apps/replicasets': { shortNames: ['rs'], categories: ['all'] },
  'apps/statefulsets': { shortNames: ['sts'], categories: ['all'] },
  'apps/daemonsets': { shortNames: ['ds'], categories: ['all'] },
  'autoscaling/horizontalpodautoscalers': { shortNames: ['hpa'], categories: ['all'] },
  'batch/jobs': { categories: ['all'] },
  'batch/cronjobs': { shortNames: ['cj'], categories: ['all'] },
  'policy/poddisruptionbudgets': { shortNames: ['pdb'] },
  'networking.k8s.io/networkpolicies': { shortNames: ['netpol'] },
  'networking.k8s.io/ingresses': { shortNames: ['ing'] },
  'networking.k8s.io/ipaddresses': { shortNames: ['ip'] },
  'events.k8s.io/events': { shortNames: ['ev'] },
  'apiextensions.k8s.io/customresourcedefinitions': { shortNames: ['crd', 'crds'], categories: ['api-extensions'] },
  'apiregistration.k8s.io/apiservices': { categories: ['api-extensions'] },
  'admissionregistration.k8s.io/mutatingwebhookconfigurations': { categories: ['api-extensions'] },
  'admissionregistration.k8s.io/validatingwebhookconfigurations': { categories: ['api-extensions'] },
  'admissionregistration.k8s.io/validatingadmissionpolicies': { categories: ['api-extensions'] },
  'admissionregistration.k8s.io/validatingadmissionpolicybindings': { categories: ['api-extensions'] },
  'admissionregistration.k8s.io/mutatingadmissionpolicies': { categories: ['api-extensions'] },
  'admissionregistration.k8s.io/mutatingadmissionpolicybindings': { categories: ['api-extensions'] },
  'certificates.k8s.io/certificatesigningrequests': { shortNames: ['csr'] },
  'scheduling.k8s.io/priorityclasses': { shortNames: ['pc'] },
  'storage.k8s.io/storageclasses': { shortNames: ['sc'] },
  'storage.k8s.io/volumeattributesclasses': { shortNames: ['vac'] },
};
