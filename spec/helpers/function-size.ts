/**
 * The functions of a TypeScript source whose body is too long: what `spec/function-size.spec.ts`
 * holds every module of `lib/` to.
 */
import ts from 'typescript';

/** A function whose body spans more lines than allowed. */
export interface LongFunction {
  /** The file, as given. */
  readonly file: string;
  /** The function's name (`Class#method`, `name`, or `<arrow>`/`<function>` when anonymous), and its first line. */
  readonly where: string;
  /** How many lines its body spans, braces included. */
  readonly lines: number;
}

/** Every function, method, constructor, accessor or arrow of `text` whose body spans more than `maxLines` lines. */
export function longFunctions(file: string, text: string, maxLines: number): LongFunction[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const body = node.body as ts.Node;
      const first = source.getLineAndCharacterOfPosition(body.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(body.getEnd()).line;
      const lines = last - first + 1;
      if (lines > maxLines) found.push({ file, where: `${nameOf(node)} (line ${first + 1})`, lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function nameOf(node: ts.SignatureDeclaration): string {
  const own = node.name && (ts.isIdentifier(node.name) || ts.isPrivateIdentifier(node.name)) ? node.name.text : undefined;
  if (ts.isConstructorDeclaration(node)) return `${classNameOf(node)}#constructor`;
  if (ts.isMethodDeclaration(node) || ts.isGetAccessor(node) || ts.isSetAccessor(node)) return `${classNameOf(node)}#${own ?? '?'}`;
  if (own !== undefined) return own;
  // An anonymous function takes the name of the variable or property it is assigned to.
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && ts.isIdentifier(parent.name))
    return parent.name.text;
  return ts.isArrowFunction(node) ? '<arrow>' : '<function>';
}

function classNameOf(node: ts.Node): string {
  const owner = node.parent;
  return owner && (ts.isClassDeclaration(owner) || ts.isClassExpression(owner)) && owner.name ? owner.name.text : '<object>';
}
