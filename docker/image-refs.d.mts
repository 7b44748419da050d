// Types of docker/image-refs.mjs, a plain script the build runs on any Node.
export declare const IMAGE_NAMES: string[]
export declare const REGISTRY: string
export declare const TAG: string
export declare function imageRef(name: string): string
/** buildah's JSON of the image (FromImageID, OCIv1, …), or undefined when absent */
export declare function inspectImage(ref: string): ({ FromImageID: string } & Record<string, unknown>) | undefined
