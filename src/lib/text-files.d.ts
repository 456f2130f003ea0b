// Files esbuild embeds as text (build.mjs).
declare module "*.sh" {
  const text: string;
  export default text;
}
