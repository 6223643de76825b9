/**
 * The markers and doc comments of each source file, collected once per file (on first use) and looked up
 * per declaration: what every generator reads markers through. Collecting a file also reports its
 * unknown, misplaced and ill-typed markers.
 */
import type { ts } from '../typescript/compiler.cjs';
import { collectFileMarkers, commentTextLines, type FileMarkers } from './collect.js';
import { describe } from './description.js';
import type { Report } from './diagnostics.js';
import type { Marker, MarkerRegistry } from './registry.js';

export class MarkerIndex {
  private readonly files = new Map<ts.SourceFile, FileMarkers>();
  /**
   * The markers of every declaration of the files collected so far, by node: asked about each property
   * several times (its schema, whether it is required, immutable...), which then needs no walk up to its
   * file.
   */
  private readonly byNode = new Map<ts.Node, Marker[]>();
  /** The doc comment of every declaration of the files collected so far, and its file's text. */
  private readonly docs = new Map<ts.Node, { text: string; range: ts.CommentRange }>();

  constructor(
    private readonly registry: MarkerRegistry,
    private readonly report: Report,
  ) {}

  /** The parsed markers and docs of a file. */
  fileMarkers(sf: ts.SourceFile): FileMarkers {
    let markers = this.files.get(sf);
    if (!markers) {
      markers = collectFileMarkers(sf, this.registry, this.report);
      this.files.set(sf, markers);
      for (const [node, list] of markers.byNode) this.byNode.set(node, list);
      const text = sf.getFullText();
      for (const [node, range] of markers.docs) this.docs.set(node, { text, range });
    }
    return markers;
  }

  /** The markers directly above a declaration (interface, type alias, class, enum, property). */
  markersOf(node: ts.Node): Marker[] {
    return this.byNode.get(node) ?? this.fileMarkers(node.getSourceFile()).byNode.get(node) ?? [];
  }

  /** The description of a declaration, from its JSDoc (description.ts). */
  descriptionOf(node: ts.Node): string | undefined {
    // A declaration of a file not collected yet has no entry in byNode: collect its file first.
    if (!this.byNode.has(node)) this.fileMarkers(node.getSourceFile());
    const doc = this.docs.get(node);
    return doc ? describe(commentTextLines(doc.text, doc.range)) : undefined;
  }
}
