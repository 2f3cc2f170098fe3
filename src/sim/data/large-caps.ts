/**
 * Real issues the simulated market always contains, with their real codes,
 * names and realistic price levels (reference prices, KRW).
 */

/** A fixed issue of the simulated market. */
export interface KnownIssue {
  readonly code: string;
  readonly market: 'kospi' | 'kosdaq';
  readonly group: 'ST' | 'EF' | 'FS';
  readonly korName: string;
  readonly engName: string;
  /** Reference price level the history oscillates around (KRW). */
  readonly ref: number;
  readonly listShrs: number;
  readonly parval: number;
  /** Mid-class industry number (the digits of a K/Q industry code). */
  readonly sector: number;
  readonly listDd: string;
  /** Standard code when it is not KR7 + code + 00 + check digit. */
  readonly isin?: string;
  /** Trades per second in continuous trading. */
  readonly rate?: number;
}

/** The large caps of DESIGN.md plus the issues the provider's examples name. */
export const KNOWN_ISSUES: readonly KnownIssue[] = [
  { code: '005930', market: 'kospi', group: 'ST', korName: '삼성전자', engName: 'SamsungElec', ref: 71_000, listShrs: 5_969_782_550, parval: 100, sector: 13, listDd: '19750611', rate: 8 },
  { code: '000660', market: 'kospi', group: 'ST', korName: 'SK하이닉스', engName: 'SK hynix', ref: 178_000, listShrs: 728_002_365, parval: 5000, sector: 13, listDd: '19961226', rate: 6 },
  { code: '373220', market: 'kospi', group: 'ST', korName: 'LG에너지솔루션', engName: 'LG Energy Solution', ref: 385_000, listShrs: 234_000_000, parval: 500, sector: 13, listDd: '20220127', rate: 4 },
  { code: '207940', market: 'kospi', group: 'ST', korName: '삼성바이오로직스', engName: 'SAMSUNG BIOLOGICS', ref: 790_000, listShrs: 71_174_000, parval: 2500, sector: 9, listDd: '20161110', rate: 3 },
  { code: '005380', market: 'kospi', group: 'ST', korName: '현대차', engName: 'HYUNDAI MOTOR', ref: 235_000, listShrs: 209_416_191, parval: 5000, sector: 15, listDd: '19740628', rate: 4 },
  { code: '000270', market: 'kospi', group: 'ST', korName: '기아', engName: 'KIA CORPORATION', ref: 96_000, listShrs: 397_672_632, parval: 5000, sector: 15, listDd: '19730721', rate: 4 },
  { code: '035420', market: 'kospi', group: 'ST', korName: 'NAVER', engName: 'NAVER', ref: 189_000, listShrs: 158_437_008, parval: 100, sector: 26, listDd: '20081129', rate: 4 },
  { code: '068270', market: 'kospi', group: 'ST', korName: '셀트리온', engName: 'Celltrion', ref: 182_000, listShrs: 216_970_000, parval: 1000, sector: 9, listDd: '20180209', rate: 4 },
  { code: '105560', market: 'kospi', group: 'ST', korName: 'KB금융', engName: 'KB Financial Group', ref: 79_000, listShrs: 393_528_000, parval: 5000, sector: 21, listDd: '20081010', rate: 3 },
  { code: '069500', market: 'kospi', group: 'EF', korName: 'KODEX 200', engName: 'KODEX 200', ref: 35_300, listShrs: 213_150_000, parval: 0, sector: 0, listDd: '20021014', rate: 5 },
  { code: '590003', market: 'kospi', group: 'EF', korName: 'KODEX 미국S&P500', engName: 'KODEX US S&P500', ref: 11_900, listShrs: 18_400_000, parval: 0, sector: 0, listDd: '20210409', rate: 0.6 },
  { code: '000020', market: 'kospi', group: 'ST', korName: '동화약품', engName: 'DongwhaPharm', ref: 11_900, listShrs: 27_931_470, parval: 1000, sector: 9, listDd: '19760324', rate: 0.4 },
  { code: '000040', market: 'kospi', group: 'ST', korName: 'KR모터스', engName: 'KR MOTORS', ref: 776, listShrs: 96_139_430, parval: 500, sector: 15, listDd: '19760525', rate: 0.4 },
  { code: '000050', market: 'kospi', group: 'ST', korName: '경방', engName: 'Kyungbang', ref: 14_900, listShrs: 27_415_270, parval: 500, sector: 6, listDd: '19560303', rate: 0.2 },
  { code: '247540', market: 'kosdaq', group: 'ST', korName: '에코프로비엠', engName: 'ECOPROBM', ref: 182_000, listShrs: 97_801_344, parval: 500, sector: 72, listDd: '20190305', rate: 5 },
  { code: '086520', market: 'kosdaq', group: 'ST', korName: '에코프로', engName: 'EcoPro', ref: 91_000, listShrs: 133_138_340, parval: 100, sector: 65, listDd: '20070720', rate: 5 },
  { code: '028300', market: 'kosdaq', group: 'ST', korName: 'HLB', engName: 'HLB', ref: 61_000, listShrs: 131_220_000, parval: 500, sector: 66, listDd: '19960515', rate: 4 },
  { code: '263750', market: 'kosdaq', group: 'ST', korName: '펄어비스', engName: 'PearlAbyss', ref: 35_500, listShrs: 63_956_000, parval: 100, sector: 37, listDd: '20170914', rate: 3 },
  { code: '293490', market: 'kosdaq', group: 'ST', korName: '카카오게임즈', engName: 'KakaoGames', ref: 19_800, listShrs: 82_790_000, parval: 100, sector: 37, listDd: '20200910', rate: 3 },
  { code: '900110', market: 'kosdaq', group: 'FS', korName: '이스트아시아홀딩스', engName: 'EAST ASIA HOLDINGS', ref: 305, listShrs: 201_980_515, parval: 0, sector: 58, listDd: '20091021', isin: 'HK0000057197', rate: 2 },
  { code: '900100', market: 'kosdaq', group: 'FS', korName: '애머릿지', engName: 'AMERIDGE', ref: 1_040, listShrs: 28_342_000, parval: 0, sector: 74, listDd: '20091028', isin: 'USU652221081', rate: 0.3 },
  { code: '900270', market: 'kosdaq', group: 'FS', korName: '헝셩그룹', engName: 'HENG SHENG GROUP', ref: 478, listShrs: 82_825_000, parval: 0, sector: 75, listDd: '20161215', isin: 'HK0000214814', rate: 1.5 },
];
