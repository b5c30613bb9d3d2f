// Sheet metadata and block segmentation: pure functions over TextItem[] (and optionally a
// GreyImage), all boxes in sheet pixels with the origin top-left.
export { disciplineFromSheetNumber, normalizeSheetNumber, sameSheetNumber } from './discipline';
export { extractSheetMetadata, type SheetMetadata, type SheetMetadataInput } from './title-block';
export {
  segmentBlocks,
  wholeSheetBlock,
  blockTypeFromTitle,
  type Block,
  type SegmentBlocksInput,
} from './blocks';
export { buildLines, type TextLine } from './text-lines';
