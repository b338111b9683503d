"""An independent evaluation set for the Korean PII detector: synthetic documents with gold spans.

What it is for
--------------
The detector's rules (recognizers, name lists, context words) were written against the examples their authors
saw. Scoring it on those same examples says little about documents it has not seen. This module writes
documents of the genres where personal data occurs in Korean text -- 공문, 민원 답변, 계약서, 판결문, 채팅,
이메일, HTML 표, 신청서 -- whose values follow the *official formats* of each identifier, not the detector's
patterns, with gold spans for every value. It was written without reading the detector's rules.

Records: one JSON object per line, `{"id", "genre", "split", "text", "spans": [{"label", "start", "end",
"text"}]}`, character offsets into `text`, end exclusive (`text[start:end] == span["text"]`); the format
`corpora.pii.evaluate.read_gold` reads. Labels are the detector's types (`corpora.pii.types.ALL_TYPES`) plus
the optional POSTAL_CODE, DATE_OF_BIRTH and AGE. Everything else in a document is a negative: dates, times,
money, counts, case and document numbers, serials, statute citations, percentages, ISBNs, order and parcel
numbers, five-digit counts outside addresses, place names not used as addresses (``서울에서 열린 회의``,
``강남구청은``), organisation names, and words that begin with a surname syllable (이번, 정부, 김치).

The two splits
--------------
`dev` is for looking at errors and tuning rules; `heldout` is for the number that is reported, and should be
looked at as little as possible. Each split draws every document from its own random stream (the stream's
seed is derived from the split name, the seed and the document index), and from its own *value pools* for
every open class of values: given names, invented road, building, apartment, 동/리/읍·면 and company names,
e-mail user names and domains. An open-class value is put in one split by a hash of its romanised form, so
the pools are disjoint by construction (and checked: any value that lands in both is dropped from both).
A rule that memorised a dev value (a name list grown from dev misses, a road-name gazetteer) therefore gains
nothing on heldout; only rules that capture the *format* transfer. Closed classes -- the 17 시·도, the real
시·군·구, surnames, banks, titles and positions, field labels, courts and ministries -- are shared, since a
detector may legitimately know all of them; the held-out documents still draw their choices from their own
stream. The canonical example names of Korean forms (홍길동, 김철수, 이영희, 김영희) are a closed class too.

Sources of the formats
----------------------
- 주소: 「도로명주소법」 and 「도로명주소법 시행령」 (표기 방법: 시·도, 시·군·구, 읍·면, 도로명, 건물번호
  (본번-부번, 지하), then 상세주소 after a comma (동·층·호) and 참고항목 in brackets: 법정동 and 공동주택
  이름 in 동 areas, only the 공동주택 이름 in 읍·면 areas); 세종특별자치시 has no 시·군·구 level. 도로명 are
  `…로`, `…대로`, `…길` and numbered branches `…로12번길`, `…로12길`. 지번주소 (법정동·리 + 지번, 산 지번).
  Real 시·도 and 시·군·구 names (행정구역 as of 2024: 강원특별자치도, 전북특별자치도, 대구 군위군);
  road, building and 동·리 names are invented from syllables. 우편번호: the five-digit 국가기초구역번호
  (since 2015), whose first two digits follow the 시·도 ranges (서울 01-09, 경기 10-18, ... 제주 63).
- 주민등록번호 (「주민등록법 시행령」 and its 번호 체계): YYMMDD-GNNNNNN, G = 1/2 (1900s), 3/4 (2000s), a
  real calendar date; the pre-October-2020 check digit (mod 11) on some numbers, a random last digit on
  others (numbers issued since 2020-10); masked forms (`-1******`, left unlabelled: already de-identified). 외국인등록번호 (「출입국관리법 시행규칙」):
  the same layout with G = 5-8 and the foreigner check digit.
- 법인등록번호 (상업등기 법인등록번호 체계): 등기관서 4 digits, 법인종류 2 (11 주식회사, 12 합명, 13 합자,
  14 유한, 21 사단, 22 재단), 일련번호 6, 검증번호 1 (weights 1,2 alternating, mod 10).
- 사업자등록번호 (국세청 사업자등록번호 체계): 세무서 코드 3, 구분 2 (01-79 개인, 81/86/87/88 영리법인,
  82 비영리법인, 85 지점, 90-99 면세 개인), 일련번호 4, 검증번호 1.
- 운전면허번호 (도로교통공단 운전면허번호 체계): 지역번호 2 (11-28), 발급연도 2, 일련번호 6, 검증·재발급
  2, written `11-23-456789-01` or without separators; the licences issued before the 2014-06-01 change print a
  region name instead of the code (`서울 11-123456-78`).
- 여권번호 (여권법 시행령; 외교부 차세대 전자여권, 2021-12): M/S/R/D/G + 8 digits, or, since 2021,
  letter + 3 digits + letter + 4 digits (`M123A4567`).
- 건강보험증 번호 (국민건강보험법 시행규칙 별지 건강보험증, the 11-digit 증번호): `X-XXXXXXXXXX` or eleven
  digits.
- 자동차 등록번호 (「자동차 등록번호판 등의 기준에 관한 고시」): 2- or 3-digit 차종 number, a 용도 letter
  (가-마, 거-저, 고-조, 구-주 private; 바·사·아·자 commercial; 하·허·호 rental; 배 delivery) and 4 digits;
  the older plates with a 시·도 name (`서울 12가 3456`).
- 전화번호 (「전기통신번호관리세칙」): 010 mobiles (and 011/016/017/019), 지역번호 02, 031-064, 070, the
  15xx/16xx/18xx 전국대표번호, +82 international forms; fax numbers also 0505.
- 카드번호: ISO/IEC 7812 issuer prefixes and the Luhn check digit. 계좌번호: the published layouts of each
  bank (국민 6-2-6, 신한 3-3-6, 우리 4-3-6, 하나 3-6-5, 농협 3-4-4-2, 기업 3-6-2-3, 카카오뱅크 4-2-7, ...).
- Genres: 「행정업무의 운영 및 혁신에 관한 규정」 and 행정업무운영 편람 (공문서: 두문 수신·(경유)·제목,
  본문, 붙임 ... 끝., 결문 with 기안자·검토자·결재권자, 시행 `처리과명-일련번호`, 우편번호·주소·전화·
  전송·전자우편·공개 구분), 국민신문고 민원 답변, 법무부 주택임대차표준계약서, 고용노동부 표준근로계약서,
  법원 판결서 (사건번호 부호 가합·가단·고단·구합 ..., 원고·피고·피고인, 주문·청구취지·이유), 카카오톡
  대화 내보내기, e-mail headers (RFC 5322) with signatures, HTML tables.
"""

from __future__ import annotations

import datetime
import random
from collections.abc import Iterator
from dataclasses import dataclass, fields
from functools import lru_cache, partial
from typing import NamedTuple

from corpora.pii import validators as v
from datagen.pii import common
from datagen.pii.common import _S, SPLITS, _digits, _Lines, _nz, _Seg, _side, _td, by_cut

GENRES: tuple[str, ...] = ("official_letter", "complaint_reply", "contract", "court_ruling", "chat", "email",
                           "html_table", "application_form")
TARGET_LABELS = ("PERSON", "PHONE", "FAX", "RRN", "FRN", "CORP_REG", "BUSINESS_REG", "DRIVER_LICENSE", "PASSPORT",
                 "CARD", "ACCOUNT", "MEDICAL_INSURANCE", "VEHICLE", "EMAIL", "URL", "IP", "ADDRESS")
# the date-of-birth label as the brief names it; corpora/pii/types.py (OPTIONAL_TYPES) may spell it DT_BIRTH
DOB_LABEL = "DT_BIRTH"  # the shared evaluation file's label (corpora/pii/types.py)
OPTIONAL_LABELS = ("POSTAL_CODE", DOB_LABEL, "AGE")
LABELS = TARGET_LABELS + OPTIONAL_LABELS

# ---------------------------------------------------------------------------------------------------------------
# Closed classes (shared by both splits)
# ---------------------------------------------------------------------------------------------------------------

# 시·도: full name, short forms, 시·군·구 (일반구 of large cities written "수원시 영통구"), 우편번호 prefix range
_SIDO: tuple[tuple[str, tuple[str, ...], tuple[str, ...], tuple[int, int]], ...] = (
    ("서울특별시", ("서울", "서울시"), (
        "종로구", "중구", "용산구", "성동구", "광진구", "동대문구", "중랑구", "성북구", "강북구", "도봉구", "노원구",
        "은평구", "서대문구", "마포구", "양천구", "강서구", "구로구", "금천구", "영등포구", "동작구", "관악구", "서초구",
        "강남구", "송파구", "강동구"), (1, 9)),
    ("부산광역시", ("부산", "부산시"), (
        "중구", "서구", "동구", "영도구", "부산진구", "동래구", "남구", "북구", "해운대구", "사하구", "금정구", "강서구",
        "연제구", "수영구", "사상구", "기장군"), (46, 49)),
    ("대구광역시", ("대구", "대구시"), (
        "중구", "동구", "서구", "남구", "북구", "수성구", "달서구", "달성군", "군위군"), (41, 43)),
    ("인천광역시", ("인천", "인천시"), (
        "중구", "동구", "미추홀구", "연수구", "남동구", "부평구", "계양구", "서구", "강화군", "옹진군"), (21, 23)),
    ("광주광역시", ("광주",), ("동구", "서구", "남구", "북구", "광산구"), (61, 62)),
    ("대전광역시", ("대전", "대전시"), ("동구", "중구", "서구", "유성구", "대덕구"), (34, 35)),
    ("울산광역시", ("울산", "울산시"), ("중구", "남구", "동구", "북구", "울주군"), (44, 45)),
    ("세종특별자치시", ("세종시",), (), (30, 30)),
    ("경기도", ("경기",), (
        "수원시 장안구", "수원시 권선구", "수원시 팔달구", "수원시 영통구", "성남시 수정구", "성남시 중원구",
        "성남시 분당구", "의정부시", "안양시 만안구", "안양시 동안구", "부천시", "광명시", "평택시", "동두천시",
        "안산시 상록구", "안산시 단원구", "고양시 덕양구", "고양시 일산동구", "고양시 일산서구", "과천시", "구리시",
        "남양주시", "오산시", "시흥시", "군포시", "의왕시", "하남시", "용인시 처인구", "용인시 기흥구", "용인시 수지구",
        "파주시", "이천시", "안성시", "김포시", "화성시", "광주시", "양주시", "포천시", "여주시", "연천군", "가평군",
        "양평군"), (10, 18)),
    ("강원특별자치도", ("강원", "강원도"), (
        "춘천시", "원주시", "강릉시", "동해시", "태백시", "속초시", "삼척시", "홍천군", "횡성군", "영월군", "평창군",
        "정선군", "철원군", "화천군", "양구군", "인제군", "고성군", "양양군"), (24, 26)),
    ("충청북도", ("충북",), (
        "청주시 상당구", "청주시 서원구", "청주시 흥덕구", "청주시 청원구", "충주시", "제천시", "보은군", "옥천군",
        "영동군", "증평군", "진천군", "괴산군", "음성군", "단양군"), (27, 29)),
    ("충청남도", ("충남",), (
        "천안시 동남구", "천안시 서북구", "공주시", "보령시", "아산시", "서산시", "논산시", "계룡시", "당진시", "금산군",
        "부여군", "서천군", "청양군", "홍성군", "예산군", "태안군"), (31, 33)),
    ("전북특별자치도", ("전북", "전라북도"), (
        "전주시 완산구", "전주시 덕진구", "군산시", "익산시", "정읍시", "남원시", "김제시", "완주군", "진안군", "무주군",
        "장수군", "임실군", "순창군", "고창군", "부안군"), (54, 56)),
    ("전라남도", ("전남",), (
        "목포시", "여수시", "순천시", "나주시", "광양시", "담양군", "곡성군", "구례군", "고흥군", "보성군", "화순군",
        "장흥군", "강진군", "해남군", "영암군", "무안군", "함평군", "영광군", "장성군", "완도군", "진도군", "신안군"),
     (57, 60)),
    ("경상북도", ("경북",), (
        "포항시 남구", "포항시 북구", "경주시", "김천시", "안동시", "구미시", "영주시", "영천시", "상주시", "문경시",
        "경산시", "의성군", "청송군", "영양군", "영덕군", "청도군", "고령군", "성주군", "칠곡군", "예천군", "봉화군",
        "울진군", "울릉군"), (36, 40)),
    ("경상남도", ("경남",), (
        "창원시 의창구", "창원시 성산구", "창원시 마산합포구", "창원시 마산회원구", "창원시 진해구", "진주시", "통영시",
        "사천시", "김해시", "밀양시", "거제시", "양산시", "의령군", "함안군", "창녕군", "고성군", "남해군", "하동군",
        "산청군", "함양군", "거창군", "합천군"), (50, 53)),
    ("제주특별자치도", ("제주", "제주도"), ("제주시", "서귀포시"), (63, 63)),
)
_SEJONG = 7
_METRO = {"서울특별시", "부산광역시", "대구광역시", "인천광역시", "광주광역시", "대전광역시", "울산광역시"}

# 운전면허 지역번호 (printed region names on licences issued before 2014-06)
_DL_REGIONS = (("서울", 11), ("부산", 12), ("경기", 13), ("강원", 14), ("충북", 15), ("충남", 16), ("전북", 17),
               ("전남", 18), ("경북", 19), ("경남", 20), ("제주", 21), ("대구", 22), ("인천", 23), ("광주", 24),
               ("대전", 25), ("울산", 26))
_DL_CODES = tuple(range(11, 27)) + (28,)
_PLATE_REGIONS = ("서울", "부산", "대구", "인천", "광주", "대전", "울산", "경기", "강원", "충북", "충남", "전북", "전남",
                  "경북", "경남", "제주")
_PLATE_PRIVATE = "가나다라마거너더러머버서어저고노도로모보소오조구누두루무부수우주"
_PLATE_COMMERCIAL = "바사아자"
_PLATE_RENTAL = "하허호"

_AREA_CODES = ("02", "031", "032", "033", "041", "042", "043", "044", "051", "052", "053", "054", "055", "061", "062",
               "063", "064")
# how a number with an area code is written: 02-123-4567, 02)123-4567, (02) 123-4567, 02.123.4567
_LAND_FORMS = ("{}-{}-{}", "{}){}-{}", "({}) {}-{}", "{}.{}.{}")
_REP_PREFIXES = ("1588", "1577", "1566", "1544", "1599", "1600", "1644", "1661", "1666", "1668", "1670", "1688",
                 "1800", "1833", "1855", "1877", "1899")

# bank, short names (chat), account layouts as (group lengths, fixed leading digits or "")
_BANKS: tuple[tuple[str, tuple[str, ...], tuple[tuple[tuple[int, ...], str], ...]], ...] = (
    ("KB국민은행", ("국민", "국민은행", "KB"), (((6, 2, 6), ""), ((3, 2, 4, 3), ""))),
    ("신한은행", ("신한",), (((3, 3, 6), "110"), ((3, 3, 6), "140"), ((3, 2, 6), ""))),
    ("우리은행", ("우리",), (((4, 3, 6), "1002"),)),
    ("하나은행", ("하나",), (((3, 6, 5), ""),)),
    ("NH농협은행", ("농협", "농협은행"), (((3, 4, 4, 2), "301"), ((3, 4, 4, 2), "302"), ((3, 4, 4, 2), "351"),
                                   ((3, 4, 4, 2), "352"))),
    ("IBK기업은행", ("기업", "기업은행"), (((3, 6, 2, 3), ""),)),
    ("카카오뱅크", ("카뱅", "카카오뱅크"), (((4, 2, 7), "3333"),)),
    ("토스뱅크", ("토스",), (((4, 4, 4), "1000"),)),
    ("케이뱅크", ("케뱅",), (((3, 3, 6), "100"),)),
    ("SC제일은행", ("SC제일", "제일은행"), (((3, 2, 6), ""),)),
    ("우체국", ("우체국",), (((6, 2, 6), ""),)),
    ("새마을금고", ("새마을",), (((4, 2, 6, 1), "9002"), ((4, 2, 6, 1), "9003"))),
    ("부산은행", ("부산은행",), (((3, 4, 4, 2), ""),)),
)

# surnames (closed, shared) with a romanisation for e-mail user names, and rough frequency weights
_SURNAMES: tuple[tuple[str, str, float], ...] = (
    ("김", "kim", 21.5), ("이", "lee", 14.7), ("박", "park", 8.4), ("최", "choi", 4.7), ("정", "jung", 4.3),
    ("강", "kang", 2.4), ("조", "cho", 2.1), ("윤", "yoon", 2.1), ("장", "jang", 2.0), ("임", "lim", 1.7),
    ("한", "han", 1.5), ("오", "oh", 1.5), ("서", "seo", 1.5), ("신", "shin", 1.5), ("권", "kwon", 1.4),
    ("황", "hwang", 1.4), ("안", "ahn", 1.3), ("송", "song", 1.3), ("전", "jeon", 1.1), ("홍", "hong", 1.1),
    ("유", "yoo", 0.9), ("고", "ko", 0.9), ("문", "moon", 0.9), ("양", "yang", 0.8), ("손", "son", 0.8),
    ("배", "bae", 0.8), ("백", "baek", 0.7), ("허", "heo", 0.6), ("남", "nam", 0.6), ("심", "shim", 0.5),
    ("노", "noh", 0.5), ("하", "ha", 0.5), ("곽", "kwak", 0.4), ("성", "sung", 0.4), ("차", "cha", 0.4),
    ("주", "joo", 0.4), ("우", "woo", 0.4), ("구", "koo", 0.4), ("민", "min", 0.3), ("류", "ryu", 0.3),
    ("나", "na", 0.3), ("진", "jin", 0.3), ("지", "ji", 0.3), ("엄", "eom", 0.3), ("채", "chae", 0.3),
    ("원", "won", 0.3), ("천", "cheon", 0.2), ("방", "bang", 0.2), ("공", "kong", 0.2), ("현", "hyun", 0.2),
    ("함", "ham", 0.2), ("변", "byun", 0.2), ("염", "yeom", 0.2), ("여", "yeo", 0.2), ("추", "choo", 0.2),
    ("도", "do", 0.2), ("소", "so", 0.2), ("석", "seok", 0.2), ("선", "sun", 0.2), ("설", "seol", 0.1),
    ("마", "ma", 0.1), ("길", "gil", 0.1), ("연", "yeon", 0.1), ("위", "wi", 0.1), ("표", "pyo", 0.1),
    ("명", "myung", 0.1), ("기", "ki", 0.1), ("반", "ban", 0.1), ("왕", "wang", 0.1), ("금", "keum", 0.1),
    ("옥", "ok", 0.1), ("육", "yuk", 0.1), ("인", "in", 0.1), ("맹", "maeng", 0.1), ("제", "je", 0.1),
    ("모", "mo", 0.1), ("탁", "tak", 0.1), ("국", "kook", 0.1), ("어", "eo", 0.1), ("편", "pyun", 0.1),
    ("용", "yong", 0.1), ("예", "ye", 0.1), ("봉", "bong", 0.1), ("경", "kyung", 0.1),
)
_COMPOUND_SURNAMES = (("황보", "hwangbo"), ("남궁", "namgung"), ("선우", "sunwoo"), ("제갈", "jegal"),
                      ("독고", "dokgo"), ("사공", "sagong"), ("서문", "seomun"))
CANONICAL_NAMES = ("홍길동", "김철수", "이영희", "김영희")

_PUBLIC_TITLES = ("주무관", "사무관", "서기관", "주사", "주사보", "팀장", "과장", "국장", "계장", "센터장", "소장")
_COMPANY_TITLES = ("사원", "주임", "대리", "과장", "차장", "부장", "이사", "상무", "전무", "대표", "매니저", "책임",
                   "선임", "수석", "팀장", "실장", "본부장")
_OTHER_TITLES = ("교수", "변호사", "법무사", "세무사", "노무사", "공인중개사", "간호사", "기자", "원장", "선생님")
_DEPTS = ("행정정책과", "민원여권과", "교통행정과", "주차관리과", "세무1과", "복지정책과", "도시계획과", "정보통신과",
          "건축과", "환경과", "건강증진과", "자치행정과", "재난안전과", "일자리경제과", "부동산정보과", "청소행정과",
          "감사담당관", "기획예산과", "문화체육과", "공원녹지과", "개인정보보호팀", "정보보안팀")
_CO_DEPTS = ("영업팀", "경영지원팀", "인사팀", "총무팀", "구매팀", "기술지원팀", "마케팅팀", "고객지원센터",
             "재무회계팀", "개발팀", "품질관리팀", "해외사업팀")
_AGENCIES = (("행정안전부", "행정안전부장관"), ("보건복지부", "보건복지부장관"), ("국토교통부", "국토교통부장관"),
             ("고용노동부", "고용노동부장관"), ("개인정보보호위원회", "개인정보보호위원회위원장"),
             ("국민건강보험공단", "국민건강보험공단 이사장"), ("도로교통공단", "도로교통공단 이사장"),
             ("한국토지주택공사", "한국토지주택공사 사장"), ("국민연금공단", "국민연금공단 이사장"),
             ("법무부", "법무부장관"), ("외교부", "외교부장관"))
_COURTS = ("서울중앙지방법원", "서울동부지방법원", "서울남부지방법원", "서울북부지방법원", "서울서부지방법원",
           "의정부지방법원", "인천지방법원", "수원지방법원", "수원지방법원 성남지원", "춘천지방법원", "대전지방법원",
           "청주지방법원", "대구지방법원", "부산지방법원", "울산지방법원", "창원지방법원", "광주지방법원",
           "전주지방법원", "제주지방법원", "서울고등법원")
_ORGS = ("국민건강보험공단", "도로교통공단", "한국소비자원", "통계청", "국세청", "한국인터넷진흥원", "기상청",
         "한국전력공사", "국민권익위원회", "서울교통공사", "한국은행", "대한상공회의소")
_LAWS = ("「개인정보 보호법」 제24조의2 제1항", "「개인정보 보호법」 제29조", "민법 제750조", "민법 제618조",
         "「주택임대차보호법」 제3조 제1항", "근로기준법 제17조 제2항", "「도로교통법」 제93조 제1항 제1호",
         "「교통사고처리 특례법」 제3조 제1항", "형법 제347조 제1항", "민사소송법 제98조",
         "「민원 처리에 관한 법률」 제27조", "「도로명주소법」 제18조",
         "「공공기관의 정보공개에 관한 법률」 제9조 제1항 제6호", "「부가가치세법」 제8조", "상법 제317조")
_NATIONS = ("베트남", "중국", "필리핀", "인도네시아", "우즈베키스탄", "네팔", "캄보디아", "태국", "미국", "몽골")
_MAIL_PROVIDERS = ("naver.com", "gmail.com", "daum.net", "hanmail.net", "kakao.com", "nate.com", "hotmail.com",
                   "outlook.com")
_ROLE_USERS = ("info", "help", "admin", "contact", "support", "privacy", "webmaster", "sales", "cs", "hr")

# ---------------------------------------------------------------------------------------------------------------
# Open classes: built from syllables, then split by a hash
# ---------------------------------------------------------------------------------------------------------------

def _romanised(raw: str) -> tuple[tuple[str, str], ...]:
    """("민", "min") pairs from "민min 서seo ...": each Hangul syllable (or name) with its romanisation."""
    return tuple(common.split_pairs(raw, "가-힣", "a-z"))


_GIVEN_SYL = _romanised(
    "민min 서seo 지ji 현hyeon 수su 예ye 도do 하ha 준jun 유yu 은eun 재jae 승seung 태tae 영yeong 정jeong 동dong "
    "상sang 성seong 종jong 진jin 혜hye 윤yun 소so 다da 채chae 시si 주ju 건geon 우woo 경gyeong 미mi 선seon 나na "
    "보bo 아a 연yeon 희hee 창chang 용yong 기ki 인in 원won 한han 세se 규gyu 형hyeong 석seok 혁hyeok 훈hoon "
    "빈bin 호ho 찬chan 율yul 린rin 솔sol 별byeol 란ran 숙suk 철cheol 명myeong 환hwan 렬ryeol 녀nyeo")
_GIVEN1 = _romanised(
    "솔sol 별byeol 찬chan 훈hoon 준jun 결gyeol 윤yun 진jin 혁hyeok 민min 현hyeon 빈bin 율yul 담dam 온on "
    "슬seul 휘hwi 건geon 란ran 경kyeong 선seon 웅ung 산san 봄bom 빛bit 샘saem 겸gyeom 람ram 솜som 린rin 욱uk "
    "탁tak 혜hye 강gang 권gwon 협hyeop 범beom")
_GIVEN3 = _romanised(
    "한아름hanareum 빛나리bitnari 하늘별haneulbyeol 은하수eunhasu 새로미saeromi 한가람hangaram 이슬비iseulbi "
    "별하나byeolhana 아름솔areumsol 다소미dasomi 가온솔gaonsol 나래별naraebyeol 초롱별chorongbyeol 해나래haenarae")
_STEM_SYL = _romanised(
    "가ga 나na 다da 라ra 마ma 바ba 사sa 자ja 하ha 한han 새sae 솔sol 빛bit 별byeol 달dal 해hae 봄bom 숲sup 들deul "
    "늘neul 온on 누nu 미mi 보bo 수su 은eun 금geum 청cheong 푸pu 람ram 샘saem 꽃kkot 솜som 담dam 결gyeol 윤yun "
    "율yul 송song 매mae 화hwa 연yeon 진jin 향hyang 평pyeong 명myeong 덕deok 학hak 봉bong 월wol 석seok 운un "
    "초cho 장jang 원won 호ho 란ran 슬seul 여yeo 려ryeo 벌beol 내nae 두du 림rim")
# stems that read as common words or real names are left out (invented names should look invented-but-plausible)
_STEM_STOP = {"사자", "하나", "수사", "가사", "미사", "사장", "장사", "화장", "장미", "보석", "석사", "호수", "수호",
              "원장", "장원", "명월", "연장", "장학", "학장", "초봉", "봉사", "운명", "명운", "평사", "자수", "수자",
              "사수", "마라", "라마", "나라", "다리", "매화", "화가", "가나", "나가", "사랑", "진화", "평화", "여자",
              "자연", "연자", "학원", "원자", "자원", "금덕", "석가", "가석", "장수", "수장", "다자", "두자", "운장"}
_BUILDING_SFX = ("타워", "빌딩", "센터", "프라자", "스퀘어", "오피스텔", "빌라", "하우스", "메디컬센터", "비즈니스센터",
                 "밸리", "타운")
_APT_SFX = ("아파트", "마을1단지", "마을2단지", "마을3단지", "파크빌", "하이츠", "캐슬", "힐스", "리버뷰", "아이파크빌")
_COMPANY_SFX = ("산업", "전자", "건설", "물산", "테크", "솔루션", "유통", "물류", "식품", "디자인", "에너지", "바이오",
                "엔지니어링", "컨설팅", "상사", "무역", "정보통신", "소프트", "모빌리티", "케미칼")
_DOMAIN_SFX = ("", "", "tech", "corp", "korea", "-tech", "group", "soft")
_DOMAIN_TLD = ("co.kr", "co.kr", "com", "kr", "net", "co.kr")


Names = tuple[str, ...]  # one open class of values, in the order they were made


@dataclass(frozen=True)
class Pools:
    """The open-class values of one split (every field is disjoint from the other split's)."""

    given1: Names
    given2: Names
    given3: Names
    stems: Names
    roads: Names
    buildings: Names
    apartments: Names
    dongs: Names
    ris: Names
    eupmyeons: Names
    companies: Names
    users: Names
    domains: Names
    gov_domains: Names

    def given_names(self) -> set[str]:
        return set(self.given1) | set(self.given2) | set(self.given3)


def _closed_stems() -> set[str]:
    out: set[str] = set()
    for full, shorts, sigungu, _ in _SIDO:
        out.add(full[:2])
        out.update(s[:2] for s in shorts)
        for sg in sigungu:
            for part in sg.split():
                out.add(part[:2])
    return out


@lru_cache(maxsize=1)
def _universe() -> dict[str, list[tuple[str, str]]]:
    """Every candidate open-class value with its romanised key, before the split."""
    # 녀, 렬, 란 never begin a given name (두음 법칙: 여, 열, 난)
    given2 = [(a + b, ra + rb) for a, ra in _GIVEN_SYL for b, rb in _GIVEN_SYL
              if a != b and a not in "녀렬란" and a + b not in {"영희", "철수", "길동"}]
    stop = _STEM_STOP | _closed_stems()
    stems = [(a + b, ra + rb) for a, ra in _STEM_SYL for b, rb in _STEM_SYL if a != b and a + b not in stop]
    return {"given1": list(_GIVEN1), "given2": given2, "given3": list(_GIVEN3), "stems": stems}


@lru_cache(maxsize=2)
def pools(split: str) -> Pools:
    """The open-class value pools of `split` ("dev" or "heldout"); independent of the seed."""
    common.check_split(split)
    both = [_raw_pools(0), _raw_pools(1)]
    mine = both[SPLITS.index(split)]
    other = both[1 - SPLITS.index(split)]
    # a value that the other split also produced, in any field (a user name equal to a domain stem, ...), is
    # dropped: no string belongs to both splits' pools
    theirs = set().union(*(getattr(other, f.name) for f in fields(Pools)))
    return Pools(**{f.name: tuple(x for x in getattr(mine, f.name) if x not in theirs) for f in fields(Pools)})


class _StemValues(NamedTuple):
    """What one invented stem (하늘, 새솔) becomes in its split's pools."""

    roads: tuple[str, ...]
    building: str
    apartment: str
    company: str
    eupmyeon: str
    domain: str
    user: str


def _stem_values(stem: str, rom: str) -> _StemValues:
    """The stem's values, drawn from the stem's own stream (a pool does not depend on which stems are beside it)."""
    pr = random.Random("evalgen-pool:" + stem)
    base = stem + pr.choice(("로", "로", "로", "대로", "길", "길"))
    if base.endswith("로"):
        roads: tuple[str, ...] = (base, f"{base}{pr.randint(1, 120)}번길", f"{base}{pr.randint(1, 60)}길")
    else:
        roads = (base, f"{stem}{pr.randint(1, 9)}길")
    return _StemValues(roads, stem + pr.choice(_BUILDING_SFX), stem + pr.choice(_APT_SFX), stem + pr.choice(_COMPANY_SFX),
                       stem + pr.choice(("읍", "면", "면")), rom + pr.choice(_DOMAIN_SFX) + "." + pr.choice(_DOMAIN_TLD),
                       f"{rom}{pr.randint(1, 99)}")


@lru_cache(maxsize=2)
def _raw_pools(side: int) -> Pools:
    u = _universe()
    pick = {k: [(s, r) for s, r in vals if _side(r) == side] for k, vals in u.items()}
    made = [_stem_values(stem, rom) for stem, rom in pick["stems"]]
    users = [m.user for m in made]
    sur_roms = [r for _, r, _ in _SURNAMES[:30]]
    for _given, rom in pick["given2"] + pick["given1"] + pick["given3"]:
        pr = random.Random("evalgen-user:" + rom)
        s = pr.choice(sur_roms)
        forms = (f"{rom}.{s}", f"{s}.{rom}", f"{s}{rom}", f"{rom}{pr.randint(70, 99)}", f"{s[0]}{rom}{pr.randint(1, 9)}",
                 f"{rom}_{s}")
        users.extend(pr.sample(forms, 2))
    stems = [s for s, _ in pick["stems"]]
    return Pools(
        given1=tuple(g for g, _ in pick["given1"]), given2=tuple(g for g, _ in pick["given2"]),
        given3=tuple(g for g, _ in pick["given3"]), stems=tuple(stems), roads=tuple(r for m in made for r in m.roads),
        buildings=tuple(m.building for m in made), apartments=tuple(m.apartment for m in made),
        dongs=tuple(s + "동" for s in stems), ris=tuple(s + "리" for s in stems),
        eupmyeons=tuple(m.eupmyeon for m in made), companies=tuple(m.company for m in made),
        users=tuple(dict.fromkeys(users)), domains=tuple(dict.fromkeys(m.domain for m in made)),
        gov_domains=tuple(r + ".go.kr" for _, r in pick["stems"]))


_SUR_W = [w for _, _, w in _SURNAMES]


class _Ctx:
    """One document's random stream and its split's pools, with the value makers."""

    def __init__(self, rng: random.Random, pools_: Pools) -> None:
        self.r = rng
        self.P = pools_

    # -- names ---------------------------------------------------------------------------------------------------
    def surname(self) -> str:
        return self.r.choices(_SURNAMES, weights=_SUR_W)[0][0]

    def person(self, canonical: float = 0.05) -> _S:
        r, P = self.r, self.P
        k = r.random()
        if k < canonical:
            return _S("PERSON", r.choice(CANONICAL_NAMES))
        k -= canonical
        if k < 0.07:
            g = r.choice(P.given2)
            return _S("PERSON", r.choice(_COMPOUND_SURNAMES)[0] + g, used=(("given2", g),))
        if k < 0.15:
            g = r.choice(P.given1)
            return _S("PERSON", self.surname() + g, used=(("given1", g),))
        if k < 0.18:
            g = r.choice(P.given3)
            return _S("PERSON", self.surname() + g, used=(("given3", g),))
        g = r.choice(P.given2)
        return _S("PERSON", self.surname() + g, used=(("given2", g),))

    def company(self, kind: str | None = None) -> tuple[str, str]:
        """(the company as written, its legal kind: 주식회사/유한회사/사단법인/재단법인)."""
        r = self.r
        core = r.choice(self.P.companies)
        kind = kind or r.choices(("주식회사", "유한회사", "사단법인", "재단법인"), (85, 9, 3, 3))[0]
        if kind == "주식회사":
            name = r.choice((f"(주){core}", f"주식회사 {core}", f"{core}(주)", f"㈜{core}", f"{core} 주식회사"))
        else:
            name = f"{kind} {core}"
        return name, kind

    def title(self, which: str = "any") -> str:
        pool = {"public": _PUBLIC_TITLES, "company": _COMPANY_TITLES, "other": _OTHER_TITLES}.get(which)
        return self.r.choice(pool or (_PUBLIC_TITLES + _COMPANY_TITLES + _OTHER_TITLES))

    def named(self, which: str = "any") -> tuple[_Seg, ...]:
        """A name with a title or position before or after it: `과장 김민수`, `김민수 과장`, `김민수 씨`."""
        r = self.r
        p = self.person()
        t = self.title(which)
        k = r.random()
        if k < 0.4:
            return (t + " ", p)
        if k < 0.85:
            return (p, " " + t)
        return (p, r.choice((" 씨", "님", " 님")))

    # -- numbers -------------------------------------------------------------------------------------------------
    def _birth(self, lo: int = 1945, hi: int = 2019) -> tuple[int, int, int]:
        r = self.r
        y = r.randint(lo, hi)
        m = r.randint(1, 12)
        d = r.randint(1, (31, 29 if y % 4 == 0 else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[m - 1])
        return y, m, d

    def rrn(self, kind: str = "RRN", mode: str | None = None, sep: str | None = None, adult: bool = False) -> _Seg:
        """A resident (or, kind="FRN", foreigner) registration number; mode "check" (pre-2020 check digit),
        "random" (a random last digit, as issued since 2020-10: newborns, and changed numbers), "masked" (plain text,
        not a gold span: a masked number is already de-identified, as the shared evaluation file treats it)."""
        r = self.r
        mode = mode or r.choices(("check", "random", "masked"), (55, 27, 18))[0]
        if mode == "random" and not adult and r.random() < 0.4:
            y, m, d = self._birth(2020, 2024)
        else:
            y, m, d = self._birth(1940, 2005 if adult else 2012) if kind == "RRN" else self._birth(1960, 2005)
        female = r.random() < 0.5
        g = (1 if y < 2000 else 3) + female + (4 if kind == "FRN" else 0)
        front = f"{y % 100:02d}{m:02d}{d:02d}"
        if mode == "masked":
            back = r.choice((f"{g}******", f"{g}******", f"{g}******", f"{g}XXXXXX", f"{g}{_digits(r, 1)}*****"))
            if kind == "RRN" and r.random() < 0.15:
                back = "*******"
            return front + r.choice(("-", "-", "-", " - ")) + back
        body = front + str(g) + _digits(r, 5)
        if mode == "check":
            ok = v.rrn_checksum_ok if kind == "RRN" else v.frn_checksum_ok
            last = next(c for c in "0123456789" if ok(body + c))
        else:
            last = _digits(r, 1)
        if sep is None:
            sep = r.choices(("-", " - ", " -", "- ", "–", " ", ""), (62, 8, 4, 4, 7, 6, 9))[0]
        return _S(kind, f"{body[:6]}{sep}{body[6:]}{last}", valid=True if mode == "check" else None)

    def corp_reg(self, kind: str = "주식회사") -> _S:
        r = self.r
        office = r.choice(("1101", "1101", "1101", "1144", "1201", "1301", "1311", "1345", "1358", "1401", "1501",
                           "1601", "1701", "1746", "1801", "1901", "2001", "2301", "2401", "2811"))
        code = {"주식회사": r.choice(("11", "11", "11", "11", "12", "13")), "유한회사": "14", "사단법인": "21",
                "재단법인": "22"}[kind]
        serial = f"{r.choice((r.randint(1, 99999), r.randint(1, 999999))):06d}"
        body = office + code + serial
        s = sum(int(c) * (1 if i % 2 == 0 else 2) for i, c in enumerate(body))
        full = body + str((10 - s % 10) % 10)
        text = r.choices((f"{full[:6]}-{full[6:]}", full, f"{full[:6]} - {full[6:]}"), (72, 18, 10))[0]
        return _S("CORP_REG", text, valid=v.corp_reg_ok(full))

    def business_reg(self, kind: str = "corp") -> _S:
        r = self.r
        office = r.randint(101, 799)
        mid = {"corp": r.choice(("81", "86", "87", "88", "81", "85")), "individual": f"{r.randint(1, 79):02d}",
               "nonprofit": "82", "exempt": f"{r.randint(90, 99)}"}[kind]
        body = f"{office}{mid}{r.randint(0, 9999):04d}"
        full = next(body + c for c in "0123456789" if v.business_reg_ok(body + c))
        text = r.choices((f"{full[:3]}-{full[3:5]}-{full[5:]}", full, f"{full[:3]} {full[3:5]} {full[5:]}"),
                         (84, 11, 5))[0]
        return _S("BUSINESS_REG", text, valid=True)

    def card(self) -> _S:
        r = self.r
        brand = r.choices(("visa", "master", "master2", "amex", "jcb", "local"), (35, 25, 5, 8, 10, 17))[0]
        if brand == "visa":
            body = "4" + _digits(r, 14)
        elif brand == "master":
            body = f"5{r.randint(1, 5)}" + _digits(r, 13)
        elif brand == "master2":
            body = str(r.randint(2221, 2720)) + _digits(r, 11)
        elif brand == "amex":
            body = r.choice(("34", "37")) + _digits(r, 12)
        elif brand == "jcb":
            body = str(r.randint(3528, 3589)) + _digits(r, 11)
        else:
            body = r.choice(("9410", "9420", "9430", "9490", "9441")) + _digits(r, 11)
        full = next(body + c for c in "0123456789" if v.luhn_ok(body + c))
        if len(full) == 15:
            groups = [full[:4], full[4:10], full[10:]]
        else:
            groups = [full[i:i + 4] for i in range(0, 16, 4)]
        sep = r.choices(("-", " ", ""), (62, 24, 14))[0]
        return _S("CARD", sep.join(groups), valid=True)

    def bank(self) -> tuple[str, str, tuple[tuple[tuple[int, ...], str], ...]]:
        name, shorts, layouts = self.r.choice(_BANKS)
        return name, self.r.choice(shorts), layouts

    def account(self, layouts: tuple[tuple[tuple[int, ...], str], ...] | None = None, casual: bool = False) -> _S:
        r = self.r
        layouts = layouts or self.bank()[2]
        groups, lead = r.choice(layouts)
        ds = lead + _digits(r, sum(groups) - len(lead))
        out: list[str] = []
        i = 0
        for g in groups:
            out.append(ds[i:i + g])
            i += g
        sep = r.choices(("-", "", " "), (45, 45, 10) if casual else (88, 9, 3))[0]
        return _S("ACCOUNT", sep.join(out))

    def passport(self) -> _S:
        r = self.r
        letter = r.choices("MSRDG", (86, 5, 5, 2, 2))[0]
        if r.random() < 0.5:
            return _S("PASSPORT", letter + _digits(r, 8))
        return _S("PASSPORT", f"{letter}{_digits(r, 3)}{r.choice('ABCDEFGHJKLMNPQRSTUVWXYZ')}{_digits(r, 4)}")

    def driver_license(self) -> _S:
        r = self.r
        yy = f"{r.choice((r.randint(0, 24), r.randint(75, 99))):02d}"
        serial = _digits(r, 6)
        tail = f"{r.randint(0, 9)}{r.choice('0000112')}"
        k = r.random()
        if k < 0.75:  # the region code, separated by hyphens, by nothing or by spaces
            return _S("DRIVER_LICENSE", by_cut(k, (0.5, 0.7), ("-", "", " ")).join((str(r.choice(_DL_CODES)), yy,
                                                                                     serial, tail)))
        region = r.choice(_DL_REGIONS)[0]
        yy = f"{r.randint(75, 113) % 100:02d}"
        return _S("DRIVER_LICENSE", f"{region} {yy}-{serial}-{tail}")

    def medical_insurance(self) -> _S:
        r = self.r
        first = str(r.randint(1, 7))
        rest = _digits(r, 10)
        return _S("MEDICAL_INSURANCE", r.choices((f"{first}-{rest}", first + rest), (55, 45))[0])

    def vehicle(self) -> _S:
        r = self.r
        k = r.random()
        use = r.choices(("p", "c", "h", "b"), (80, 9, 8, 3))[0]
        letter = {"p": r.choice(_PLATE_PRIVATE), "c": r.choice(_PLATE_COMMERCIAL), "h": r.choice(_PLATE_RENTAL),
                  "b": "배"}[use]
        four = f"{r.randint(1, 9999):04d}"
        if k < 0.82:  # a 2-digit (before 2019) or 3-digit 차종 number, the four digits after a space or not
            kind = r.randint(10, 69) if k < 0.42 else r.randint(100, 699)
            return _S("VEHICLE", f"{kind}{letter}{by_cut(k, (0.32, 0.42, 0.67), (' ', '', ' ', ''))}{four}")
        return _S("VEHICLE", f"{r.choice(_PLATE_REGIONS)} {r.randint(10, 99)}{letter} {four}")

    def phone(self, kind: str | None = None, casual: bool = False) -> _S:
        r = self.r
        kind = kind or r.choices(("mobile", "land", "rep", "intl", "voip"), (55, 29, 7, 5, 4))[0]
        if kind == "mobile":
            if r.random() < 0.06:
                parts = [r.choice(("011", "016", "017", "019")), _nz(r, r.choice((3, 4))), _digits(r, 4)]
            elif r.random() < 0.05:
                return self.phone("intl")
            else:
                parts = ["010", _nz(r, 4), _digits(r, 4)]
            sep = r.choices(("-", " ", ".", ""), (40, 30, 5, 25) if casual else (80, 7, 5, 8))[0]
            return _S("PHONE", sep.join(parts))
        if kind == "land":
            area = r.choice(_AREA_CODES)
            a, b = _nz(r, r.choice((3, 4))), _digits(r, 4)
            form = by_cut(r.random(), (0.72, 0.8, 0.87, 0.93), _LAND_FORMS + ("{} {} {}",))
            return _S("PHONE", form.format(area, a, b))
        if kind == "rep":
            return _S("PHONE", f"{r.choice(_REP_PREFIXES)}-{_digits(r, 4)}")
        if kind == "intl":
            if r.random() < 0.7:
                a, b = _nz(r, 4), _digits(r, 4)
                return _S("PHONE", r.choice((f"+82-10-{a}-{b}", f"+82 10 {a} {b}", f"+82 10-{a}-{b}",
                                             f"+82-10-{a}{b}")))
            area = r.choice(_AREA_CODES)[1:]
            return _S("PHONE", f"+82-{area}-{_nz(r, r.choice((3, 4)))}-{_digits(r, 4)}")
        return _S("PHONE", f"070-{_nz(r, 4)}-{_digits(r, 4)}")

    def fax(self) -> _S:
        r = self.r
        if r.random() < 0.12:
            return _S("FAX", f"0505-{_nz(r, 3)}-{_digits(r, 4)}")
        area = r.choice(_AREA_CODES)
        a, b = _nz(r, r.choice((3, 4))), _digits(r, 4)
        return _S("FAX", r.choices(_LAND_FORMS, (82, 6, 6, 6))[0].format(area, a, b))

    def domain(self) -> str:
        return self.r.choice(self.P.domains)

    def email(self, domain: str | None = None, role: bool = False) -> _S:
        r = self.r
        user, used = common.mail_user(r, role, _ROLE_USERS, self.P.users)
        if domain is None:  # a mail provider, the government's korea.kr, or a company of the split
            domain = by_cut(r.random(), (0.55, 0.68), (lambda: r.choice(_MAIL_PROVIDERS), lambda: "korea.kr",
                                                      self.domain))()
        if domain in self.P.domains or domain in self.P.gov_domains:
            used += (("domains" if domain in self.P.domains else "gov_domains", domain),)
        if r.random() < 0.04:
            user = user.capitalize()
        return _S("EMAIL", f"{user}@{domain}", used=used)

    def url(self, domain: str | None = None) -> _S:
        r = self.r
        if domain is None:
            domain = r.choice(self.P.gov_domains) if r.random() < 0.35 else self.domain()
        used = (("gov_domains" if domain.endswith(".go.kr") else "domains", domain),)
        k = r.random()
        if k < 0.08:
            user = r.choice(self.P.users)
            return _S("URL", f"https://blog.naver.com/{user}", used=(("users", user),))
        path = r.choice(("", "/", "/board/view.do?id=" + str(r.randint(1, 99999)), "/notice/" + str(r.randint(1, 9999)),
                         "/main.do", "/privacy", "/recruit/list", "/bbs/board.php?bo_table=free&wr_id="
                         + str(r.randint(1, 9999)), "/minwon/apply.jsp"))
        text = common.web_address(r, domain, path, ("m.", "shop.", "help.", "eminwon."), (65, 20, 15))
        return _S("URL", text, used=used)

    def ip(self) -> _S:
        return common.ipv4(self.r, self.r.random(), (0.2, 0.3, 0.35))

    def postal(self, sido_index: int) -> _S:
        lo, hi = _SIDO[sido_index][3]
        first = self.r.randint(lo, hi)
        rest = self.r.randint(0, 644) if first == 63 else self.r.randint(0, 999)
        return _S("POSTAL_CODE", f"{first:02d}{rest:03d}")

    def dob(self, style: str | None = None) -> _S:
        y, m, d = self._birth(1945, 2010)
        style = style or self.r.choice(("kor", "dot0", "dot", "short", "iso", "six"))
        text = {"kor": f"{y}년 {m}월 {d}일", "dot0": f"{y}.{m:02d}.{d:02d}", "dot": f"{y}. {m}. {d}.",
                "short": f"{y % 100:02d}.{m}.{d}", "iso": f"{y}-{m:02d}-{d:02d}",
                "six": f"{y % 100:02d}{m:02d}{d:02d}"}[style]
        return _S(DOB_LABEL, text)

    def dob_field(self) -> tuple[_Seg, ...]:
        r = self.r
        k = r.random()
        if k < 0.45:
            return (r.choice(("생년월일: ", "생년월일 : ")), self.dob())
        if k < 0.7:
            return ("생년월일 ", self.dob(r.choice(("dot0", "iso", "dot"))))
        if k < 0.85:
            return ("출생 ", self.dob("short"))
        return ("생년월일(6자리): ", self.dob("six"))

    def age(self) -> tuple[_Seg, ...]:
        r = self.r
        n = r.randint(19, 79)
        k = r.random()
        if k < 0.4:
            return (_S("AGE", f"만 {n}세"),)
        if k < 0.75:
            return (_S("AGE", f"{n}세"),)
        return (r.choice(("나이: ", "나이 : ", "나이 ")), _S("AGE", str(n)))

    # -- addresses -----------------------------------------------------------------------------------------------
    def address(self, form: str | None = None, casual: bool = False, allow_break: bool = False
                ) -> tuple[_S, int]:
        """(an ADDRESS span, the index of its 시·도 for a matching postal code)."""
        r, P = self.r, self.P
        form = form or r.choices(("road", "jibun", "sejong"), (70, 20, 10))[0]
        used: list[tuple[str, str]] = []
        if form == "sejong":
            si = _SEJONG
            head = [r.choice(("세종특별자치시", "세종특별자치시", "세종시"))]
            rural = r.random() < 0.3
        else:
            si = r.choice([i for i in range(len(_SIDO)) if i != _SEJONG])
            full, shorts, sigungu, _ = _SIDO[si]
            sg = r.choice(sigungu)
            k = r.random()
            sido_txt = full if k < 0.62 else r.choice(shorts)
            head = [sg] if casual and r.random() < 0.4 else [sido_txt, sg]
            rural = sg.endswith("군") or (full not in _METRO and sg.endswith("시") and " " not in sg
                                          and r.random() < 0.3)
        if rural and (form != "jibun" or r.random() < 0.7):
            em = r.choice(P.eupmyeons)
            head.append(em)
            used.append(("eupmyeons", em))
        else:
            rural = False
        apt: str | None = None
        bld: str | None = None
        if form in ("road", "sejong"):
            road = r.choice(P.roads)
            used.append(("roads", road))
            main = r.choices((r.randint(1, 99), r.randint(1, 399), r.randint(100, 2999)), (55, 35, 10))[0]
            bno = f"{main}-{r.randint(1, 30)}" if r.random() < 0.15 else str(main)
            if r.random() < 0.04:
                bno = "지하 " + bno
            tail = f"{road} {bno}"
            floor, unit = r.randint(1, 25), r.randint(1, 8)
            k = r.random()
            if k < 0.6:
                detail = by_cut(k, (0.28, 0.42, 0.52), ("", f", {floor}층", f", {floor}{unit:02d}호",
                                                        f", {floor}층 {floor}{unit:02d}호"))
            elif k < 0.78:
                apt = r.choice(P.apartments)
                detail = f", {r.choice((r.randint(101, 125), r.randint(201, 212)))}동 {floor}{unit:02d}호"
            elif k < 0.93:
                bld = r.choice(P.buildings)
                detail = r.choice((f", {bld} {r.choice('ABC')}동 {floor}{unit:02d}호", f", {bld} {floor}층",
                                   f", {bld} {floor}{unit:02d}호"))
            else:
                detail = f", 지하{r.randint(1, 3)}층"
            if detail and (casual or r.random() < 0.12):
                detail = " " + detail[2:]
            ref = ""
            if not casual or r.random() < 0.2:
                if rural:
                    ref = f"({apt})" if apt else ""
                else:
                    dong = r.choice(P.dongs)
                    k = r.random()
                    if apt:
                        ref = f"({dong}, {apt})"
                        used.append(("dongs", dong))
                    elif bld and k < 0.4:
                        ref = f"({dong}, {bld})"
                        used.append(("dongs", dong))
                    elif k < 0.62:
                        ref = f"({dong})"
                        used.append(("dongs", dong))
            if ref:
                ref = (" " if r.random() < 0.75 else "") + ref
            if apt:
                used.append(("apartments", apt))
            if bld:
                used.append(("buildings", bld))
            tail += detail + ref
        else:
            if rural:
                loc = r.choice(P.ris)
                used.append(("ris", loc))
            else:
                loc = r.choice(P.dongs)
                used.append(("dongs", loc))
            main = r.randint(1, 999)
            k = r.random()
            # 산 지번 with its 부번 or without, 본번-부번, 본번 alone, 본번 + 번지; a 부번 is drawn only where written
            sub = r.randint(1, 30) if k < 0.18 else r.randint(1, 60) if 0.32 <= k < 0.72 else 0
            num = by_cut(k, (0.18, 0.32, 0.72, 0.88), (f"산 {main}-{sub}", f"산{main}", f"{main}-{sub}", str(main),
                                                       f"{main}번지"))
            tail = f"{loc} {num}"
            if not rural and r.random() < 0.25:
                apt = r.choice(P.apartments)
                used.append(("apartments", apt))
                tail += f" {apt} {r.randint(101, 120)}동 {r.randint(1, 25)}{r.randint(1, 6):02d}호"
        text = " ".join(head) + " " + tail
        if allow_break and not casual and r.random() < 0.12:
            cut = len(" ".join(head))
            if len(head) > 1 and r.random() < 0.3:
                cut = len(head[0])
            text = text[:cut] + "\n" + text[cut + 1:]
        return _S("ADDRESS", text, used=tuple(used)), si

    def address_with_postal(self, allow_break: bool = False) -> tuple[_Seg, ...]:
        """An address, sometimes with its 우편번호 before it: `(06236) 서울특별시 …`, `우편번호 06236 …`."""
        a, si = self.address(allow_break=allow_break)
        r = self.r
        k = r.random()
        if k < 0.35:
            return (a,)
        p = self.postal(si)
        if k < 0.65:
            return ("(", p, ") ", a)
        if k < 0.8:
            return ("[", p, "] ", a)
        if k < 0.9:
            return ("우편번호 ", p, " ", a)
        return (a, " (우편번호 ", p, ")")

    # -- negatives -----------------------------------------------------------------------------------------------
    def date(self, style: str | None = None, year: int | None = None) -> str:
        r = self.r
        y = year or r.randint(2019, 2025)
        m, d = r.randint(1, 12), r.randint(1, 28)
        style = style or r.choice(("dot", "kor", "iso", "dot0"))
        return {"dot": f"{y}. {m}. {d}.", "kor": f"{y}년 {m}월 {d}일", "iso": f"{y}-{m:02d}-{d:02d}",
                "dot0": f"{y}.{m:02d}.{d:02d}"}[style]

    def docno(self, dept: str | None = None) -> str:
        return f"{dept or self.r.choice(_DEPTS)}-{self.r.randint(100, 99999)}"

    def case_no(self) -> tuple[str, str]:
        r = self.r
        code, name = r.choice((("가합", "손해배상(기)"), ("가단", "대여금"), ("가단", "임대차보증금반환"),
                               ("가소", "물품대금"), ("나", "손해배상(자)"), ("고단", "교통사고처리특례법위반(치상)"),
                               ("고단", "사기"), ("고합", "사기"), ("노", "사기"),
                               ("고단", "정보통신망이용촉진및정보보호등에관한법률위반(명예훼손)"),
                               ("구합", "자동차운전면허취소처분취소"), ("구단", "자동차운전면허취소처분취소")))
        return f"{r.randint(2019, 2024)}{code}{r.randint(100, 99999)}", name

    def place_short(self) -> str:
        full, shorts, _, _ = self.r.choice(_SIDO)
        return self.r.choice((full,) + shorts)

    def negative(self) -> str:
        r = self.r
        k = r.randrange(30)
        d = self.date()
        if k == 0:
            return (f"회의는 {self.date('kor')} {r.choice(('오전', '오후'))} {r.randint(1, 11)}시 {r.choice((0, 10, 30))}분에 "
                    f"{r.randint(2, 15)}층 대회의실에서 열립니다.").replace(" 0분", "")
        if k == 1:
            a = r.randint(10, 9999) * 1000
            return f"총 결제 금액은 {a:,}원이며 부가가치세 {a // 11:,}원이 포함되어 있습니다."
        if k == 2:
            return r.choice((f"제품 일련번호 SN-{r.randint(2019, 2024)}-{_digits(r, 4)}-{_digits(r, 4)}을 확인해 주세요.",
                             f"S/N {r.randint(1, 9)}CE{_digits(r, 4)}D0G 장비의 점검을 완료했습니다.",
                             f"모델명 AB-{_digits(r, 4)}K, 제조일자 {self.date('dot0')}"))
        if k == 3:
            return f"{r.choice(_LAWS)}에 따라 처리하였습니다."
        if k == 4:
            y = r.randint(2000, 2020)
            return r.choice((f"{y}~{y + r.randint(1, 5)}년 추진 실적을 정리하였습니다.",
                             f"{y}-{y + 1} 시즌 최종 순위는 {r.randint(1, 10)}위였다."))
        if k == 5:
            return f"전년 대비 {r.randint(1, 40)}.{r.randint(0, 9)}% 증가하였으며 목표 달성률은 {r.randint(60, 120)}%입니다."
        if k == 6:
            return f"참고 도서: ISBN 978-89-{_digits(r, 4)}-{_digits(r, 3)}-{_digits(r, 1)} ({r.randint(2010, 2024)})"
        if k == 7:
            return f"주문번호 {r.randint(2019, 2024)}{r.randint(1, 12):02d}{r.randint(1, 28):02d}-{_digits(r, 7)} 건이 {d}에 발송되었습니다."
        if k == 8:
            return f"접수 건수는 총 {r.randint(10000, 99999)}건으로 집계되었습니다."
        if k == 9:
            return f"사건번호 {self.case_no()[0]} 관련 서류를 제출하였습니다."
        if k == 10:
            return f"문서번호 {self.docno()}({d})를 참고하시기 바랍니다."
        if k == 11:
            return (f"{self.place_short()}에서 열린 {r.choice(('설명회', '박람회', '정책 토론회', '간담회'))}에는 "
                    f"{r.randint(30, 3000):,}명이 참석하였다.")
        if k == 12:
            sg = r.choice([s for _, _, sgs, _ in _SIDO for s in sgs]).split()[-1]
            return f"{sg}청은 {d}부터 {r.choice(('불법 주정차 집중 단속', '도로 보수 공사', '무료 건강검진'))}을 실시한다고 밝혔다."
        if k == 13:
            return f"{r.choice(_ORGS)} 관계자는 \"관련 절차를 조속히 마무리하겠다\"고 말했다."
        if k == 14:
            return r.choice(("이번 조치는 관련 법령 개정에 따른 것입니다.", "정부는 올해 예산을 동결하기로 했다.",
                             "김치 냉장고 할인 행사가 진행 중입니다.", "이상의 내용을 확인하였습니다.",
                             "최근 유사한 민원이 증가하고 있습니다.", "한편 조사 결과는 다음 달 발표된다.",
                             "장기적으로 제도 개선이 필요합니다.", "신청 서류는 전자우편으로 제출할 수 없습니다.",
                             "오늘 황사 농도가 높으니 외출에 유의하시기 바랍니다.", "안내 사항을 반드시 확인하십시오."))
        if k == 15:
            return f"열차는 {r.randint(5, 12):02d}:{r.randint(0, 59):02d}에 출발하여 {r.randint(13, 23)}:{r.randint(0, 59):02d}에 도착한다."
        if k == 16:
            return f"버전 {r.randint(1, 12)}.{r.randint(0, 9)}.{r.randint(0, 30)}에서 오류가 수정되었습니다."
        if k == 17:
            return f"좌표는 {r.randint(33, 38)}.{_digits(r, 4)}, {r.randint(125, 129)}.{_digits(r, 4)}이다."
        if k == 18:
            return f"{self.place_short()} 인구는 {r.randint(100000, 9999999):,}명으로 집계되었다."
        if k == 19:
            return f"송장번호 {_digits(r, 4)}-{_digits(r, 4)}-{_digits(r, 4)}로 배송 조회가 가능합니다."
        if k == 20:
            return f"계약 기간은 {self.date('dot')} ~ {self.date('dot')}({r.randint(3, 24)}개월)입니다."
        if k == 21:
            return f"지상 {r.randint(3, 40)}층, 지하 {r.randint(1, 6)}층 규모로 연면적은 {r.randint(1000, 99999):,}㎡이다."
        if k == 22:
            return f"신청번호 1AA-{r.randint(19, 24)}{r.randint(1, 12):02d}-{_digits(r, 7)}로 처리 상황을 조회할 수 있습니다."
        if k == 23:
            return f"오후 {r.randint(1, 6)}시 기준 대기 인원은 {r.randint(2, 90)}명, 예상 대기 시간은 {r.randint(5, 60)}분입니다."
        if k == 24:
            return f"등기번호 {_digits(r, 13)}로 발송하였습니다."
        if k == 25:
            core = r.choice(self.P.companies)
            return f"{core}은 올해 매출 {r.randint(10, 9999):,}억 원을 기록했다."
        if k == 26:
            return f"제{r.randint(1, 80)}조 제{r.randint(1, 9)}항 제{r.randint(1, 9)}호의 요건을 충족하지 않습니다."
        if k == 27:
            return f"본 자료는 {r.randint(2019, 2024)}년 {r.randint(1, 12)}월 말 기준이며 단위는 천원입니다."
        if k == 28:
            return f"관리번호 제{r.randint(2019, 2024)}-{r.randint(1, 9999):04d}호로 등록되었습니다."
        return f"{self.place_short()} 지역 {r.choice(('중소기업', '전통시장', '초등학교'))} {r.randint(10, 900)}곳이 참여했다."


# ---------------------------------------------------------------------------------------------------------------
# Genres
# ---------------------------------------------------------------------------------------------------------------


def _institution(c: _Ctx) -> tuple[str, str]:
    r = c.r
    if r.random() < 0.4:
        return r.choice(_AGENCIES)
    full, _, sigungu, _ = r.choice(_SIDO)
    if sigungu and r.random() < 0.7:
        sg = r.choice(sigungu).split()[0]
        return f"{full} {sg}", f"{sg}{'청장' if sg.endswith('구') else '수' if sg.endswith('군') else '장'}"
    return full, full + ("교육감" if r.random() < 0.1 else "지사" if full.endswith("도") else "장")


def _g_official(c: _Ctx) -> _Lines:
    r = c.r
    b = _Lines()
    org, head = _institution(c)
    dept = r.choice(_DEPTS)
    b.add(org)
    k = r.random()
    if k < 0.35:
        b.add("수신  수신자 참조")
    elif k < 0.65:
        b.add(f"수신  {c.company()[0]} 대표이사")
    elif k < 0.85:
        b.add("수신  ", c.person(), " 귀하")
    else:
        b.add(f"수신  {r.choice(_DEPTS)}장({r.choice(_DEPTS)}장 참조)")
    b.add("(경유)", opt=True)
    topic = r.choice(("개인정보 처리 실태 점검 결과 통보", "과태료 부과 사전 통지", "민원 처리 결과 회신",
                      "계약 체결 결과 알림", "건강보험 자격 변동 안내", "정보보안 점검 결과 알림",
                      "사업자 현황 자료 제출 요청", "운전면허 행정처분 사전 통지"))
    b.add(f"제목  {topic}")
    b.blank()
    num = 1
    if r.random() < 0.7:
        b.add(f"{num}. 관련: {c.docno()}({c.date()})")
        num += 1
    b.add(f"{num}. {r.choice(_LAWS)}에 따라 아래와 같이 {topic.split()[-1]}합니다.")
    num += 1
    items: list[tuple[_Seg, ...]] = []
    if r.random() < 0.45:
        name, kind = c.company()
        items.append((f"업체명: {name}   대표자: ", c.person()))
        brn = c.business_reg("corp" if kind.endswith("회사") else "nonprofit")
        items.append(("사업자등록번호: ", brn) + ((", 법인등록번호: ", c.corp_reg(kind))
                                                          if r.random() < 0.75 else ()))
        items.append(("소재지: ",) + c.address_with_postal())
    if r.random() < 0.5:
        items.append(("성명: ", c.person(), "  (", c.rrn(mode=r.choice(("masked", "check"))), ")"))
        items.append(("주소: ", c.address()[0]))
        items.append(("연락처: ", c.phone("mobile")))
    if r.random() < 0.25:
        items.append(("위반 차량: ", c.vehicle(), " (소유자 ", c.person(), ")"))
    if r.random() < 0.28:
        items.append((f"{c.date()} 외부 IP ", c.ip(), f"에서 업무 시스템 접속 시도가 {r.randint(2, 300)}회 확인되었습니다."))
    if r.random() < 0.18:
        items.append(("피부양자 ", c.person(), "(건강보험증번호 ", c.medical_insurance(), ")의 자격 취득 신고가 접수되었습니다."))
    if r.random() < 0.15:
        items.append(("대상자 운전면허번호: ", c.driver_license()))
    if r.random() < 0.2:
        items.append(("외국인등록번호: ", c.rrn("FRN")))
    for i, it in enumerate(items[:7]):
        b.add(f"  {'가나다라마바사'[i]}. ", *it, opt=i >= 3)
    if r.random() < 0.5:
        b.add(f"{num}. {c.negative()}")
        num += 1
    b.add(f"{num}. 자세한 사항은 ", *c.named("public"), "(", c.phone("land"), ")에게 문의하시기 바랍니다.")
    b.add(f"붙임  1. {r.choice(('점검 결과', '처분 사전 통지서', '제출 서식', '계약서 사본'))} 1부.  끝.")
    b.blank()
    b.add(head)
    p1, p2, p3 = c.person(0.02), c.person(0.02), c.person(0.02)
    k = r.random()
    if k < 0.4:
        b.add("★주무관 ", p1, "   팀장 ", p2, f"   {r.choice(('과장', '국장'))} ", p3)
    elif k < 0.75:
        b.add("기안자 주무관 ", p1, "  검토자 사무관 ", p2, "  결재권자 과장 ", p3)
    else:
        b.add("주무관 ", p1, "   과장 전결 ", f"{c.date('dot')} ", p3)
    if r.random() < 0.4:
        b.add(f"협조자  {r.choice(_DEPTS)} {r.choice(_PUBLIC_TITLES)} ", c.person(), opt=True)
    b.add(f"시행  {dept}-{r.randint(100, 99999)} ({c.date('dot')})   접수  ")
    a, si = c.address(allow_break=True)
    segs: list[_Seg] = ["우 ", c.postal(si), "  ", a]
    if r.random() < 0.75:
        segs += [" / ", c.url()]
    b.add(*segs)
    segs = [f"{r.choice(('전화번호', '전화'))} ", c.phone("land"), f"  {r.choice(('전송', '팩스번호', '팩스'))} ", c.fax()]
    if r.random() < 0.9:
        segs += [" / ", c.email(domain=r.choice(("korea.kr", r.choice(c.P.gov_domains))))]
    segs.append(f" / {r.choice(('대국민 공개', '부분공개(6)', '비공개(6)'))}")
    b.add(*segs)
    return b


def _g_complaint(c: _Ctx) -> _Lines:
    r = c.r
    b = _Lines()
    org, _ = _institution(c)
    b.add(r.choice(("민원 처리 결과 안내", "[민원 답변서]", f"{org} 민원 답변")))
    b.add(f"신청번호: 1AA-{r.randint(19, 24)}{r.randint(1, 12):02d}-{_digits(r, 7)}   처리기관: {org}")
    b.add("신청인: ", c.person(), " 귀하")
    if r.random() < 0.55:
        b.add("주소: ", c.address(allow_break=True)[0])
    if r.random() < 0.5:
        b.add("연락처: ", c.phone("mobile"), *((" / 이메일: ", c.email()) if r.random() < 0.4 else ()))
    b.blank()
    b.add(f"1. 안녕하십니까? 평소 {org.split()[-1]} 행정에 관심을 가져 주신 데 대하여 감사드립니다.", opt=True)
    b.add(f"2. 귀하께서 {c.date('kor')} 국민신문고를 통해 신청하신 민원에 대한 검토 결과를 다음과 같이 알려 드립니다.")
    bodies: list[tuple[_Seg, ...]] = []
    if r.random() < 0.35:
        bodies.append(("신고하신 차량(", c.vehicle(), ")에 대하여 현장 확인 후 과태료를 부과하였습니다."))
    if r.random() < 0.3:
        bodies.append(("결제에 사용하신 카드(", c.card(), f")의 승인 취소가 {c.date()} 완료되었습니다."))
    if r.random() < 0.3:
        bank, _, lay = c.bank()
        bodies.append((f"환급금은 신청하신 {bank} 계좌(", c.account(lay), f")로 {c.date('kor')}에 입금될 예정입니다."))
    if r.random() < 0.22:
        bodies.append(("피부양자 ", c.person(), "님(건강보험증번호 ", c.medical_insurance(), ")의 자격 취득 처리가 완료되었습니다."))
    if r.random() < 0.22:
        bodies.append(("운전면허번호 ", c.driver_license(), f"의 적성검사 기간은 {c.date('kor')}까지입니다."))
    if r.random() < 0.22:
        bodies.append(("여권번호 ", c.passport(), "의 재발급 신청이 정상 접수되었습니다."))
    if r.random() < 0.18:
        bodies.append(("외국인등록번호 ", c.rrn("FRN"), f"로 조회한 결과 체류기간은 {c.date('kor')}까지입니다."))
    if r.random() < 0.22:
        bodies.append((f"귀하의 계정은 {c.date()} {r.randint(0, 23):02d}:{r.randint(0, 59):02d}경 ", c.ip(),
                       "에서 접속된 기록이 있습니다."))
    if r.random() < 0.15:
        bodies.append(("사업자등록번호 ", c.business_reg(r.choice(("individual", "corp"))), "의 상태는 계속사업자입니다."))
    if r.random() < 0.18:
        bodies.append(("법인등록번호 ", c.corp_reg(), "의 등기사항은 인터넷등기소에서 확인하실 수 있습니다."))
    if r.random() < 0.2:
        bodies.append(("전입 신고하신 주소(", c.address()[0], ")로 통지서가 발송되었습니다."))
    if r.random() < 0.15:
        bodies.append(("민원인 ", c.person(), "(", *c.age(), ")의 진술에 따르면 현장은 이미 정리된 상태였습니다."))
    if not bodies:
        bodies.append(("자세한 안내는 ", c.url(), "에서 확인하실 수 있습니다."))
    for i, bd in enumerate(bodies[:5]):
        b.add(f"  {'가나다라마'[i]}. ", *bd)
    if r.random() < 0.45:
        b.add("3. 관련 서식은 누리집(", c.url(), ")에서 내려받으실 수 있습니다.")
    for _ in range(r.randint(0, 2)):
        b.add(c.negative(), opt=True)
    k = r.random()
    dept = r.choice(_DEPTS)
    if k < 0.4:
        b.add(f"4. 답변 내용에 대한 추가 설명이 필요한 경우 {dept} ", c.person(), " 주무관(☎ ", c.phone("land"),
              ")에게 연락 주시면 친절히 안내해 드리겠습니다.")
    elif k < 0.7:
        b.add("(담당: ", c.person(), ", 전화 ", c.phone("land"), *((", 팩스 ", c.fax()) if r.random() < 0.5 else ()),
              ")")
    elif k < 0.85:
        b.add(f"담당 {dept} ", *c.named("public"), " / 전화 ", c.phone(r.choice(("land", "rep"))), " / 팩스 ", c.fax())
    else:
        b.add("담당 주무관 ", c.person(), " (", c.phone("land"), ")")
    b.add("감사합니다.", opt=True)
    return b


_DEPOSITS = ((5_000_000, "오백만"), (10_000_000, "일천만"), (30_000_000, "삼천만"), (50_000_000, "오천만"),
             (100_000_000, "일억"), (150_000_000, "일억오천만"), (200_000_000, "이억"), (320_000_000, "삼억이천만"))


def _party(c: _Ctx, role: str, foreign: bool = False) -> list[tuple[_Seg, ...]]:
    r = c.r
    rows: list[tuple[_Seg, ...]] = [(f"{role}  주소: ", c.address(allow_break=True)[0])]
    idn = c.rrn("FRN") if foreign else c.rrn(adult=True)
    lab = "외국인등록번호" if foreign else "주민등록번호"
    rows.append((f"        {lab}: ", idn, "   전화: ", c.phone("mobile")))
    rows.append(("        성명: ", c.person(), r.choice(("  (인)", " (서명 또는 인)", "  ㊞", ""))))
    return rows


def _g_contract(c: _Ctx) -> _Lines:
    r = c.r
    b = _Lines()
    kind = r.choices(("lease", "labor", "service"), (40, 35, 25))[0]
    if kind == "lease":
        b.add(r.choice(("부동산(주택) 임대차 계약서", "주택임대차표준계약서", "부동산 월세 계약서")))
        b.add("임대인과 임차인 쌍방은 아래 표시 부동산에 관하여 다음 계약 내용과 같이 임대차계약을 체결한다.", opt=True)
        b.add("소재지: ", c.address()[0])
        b.add(f"토지 지목 대  면적 {r.randint(30, 400)}.{r.randint(0, 99):02d}㎡ / 건물 구조 철근콘크리트  면적 "
              f"{r.randint(20, 135)}.{r.randint(0, 99):02d}㎡", opt=True)
        amt, han = r.choice(_DEPOSITS)
        b.add(f"제1조(목적) 보증금 금 {han}원정(₩{amt:,}), 계약금 금 {amt // 10:,}원은 계약 시에 지불한다.")
        b.add(f"제2조(존속기간) 임대인은 {c.date('kor')}까지 위 부동산을 임차인에게 인도한다.", opt=True)
        bank, _, lay = c.bank()
        b.add(f"보증금 입금 계좌: {bank} ", c.account(lay), " (예금주: ", c.person(), ")")
        if r.random() < 0.3:
            b.add("특약사항: 임차인 차량(", c.vehicle(), ") 1대 주차를 허용한다.", opt=True)
        b.add(f"본 계약을 증명하기 위하여 계약 당사자가 이의 없음을 확인하고 각각 서명·날인한다.  {c.date('kor')}")
        for prow in _party(c, "임대인") + _party(c, "임차인", foreign=r.random() < 0.3):
            b.add(*prow)
        if r.random() < 0.5:
            b.add("개업공인중개사  사무소 소재지: ", c.address()[0], opt=True)
            b.add(f"        등록번호: {r.randint(11110, 50130)}-{r.randint(2010, 2024)}-{r.randint(1, 999):05d}  대표: ",
                  c.person(), "  전화: ", c.phone("land"), opt=True)
    elif kind == "labor":
        name, _ = c.company()
        foreign = r.random() < 0.35
        b.add("표준근로계약서" + (" (외국인근로자용)" if foreign else ""))
        b.add(f"{name}(이하 \"사업주\"라 함)과(와) ", c.person(), "(이하 \"근로자\"라 함)은 다음과 같이 근로계약을 체결한다.")
        b.add(f"1. 근로개시일: {c.date('kor')}부터", opt=True)
        b.add("2. 근무 장소: ", c.address()[0])
        b.add("3. 소정근로시간: 09시 00분부터 18시 00분까지 (휴게시간 12시 00분~13시 00분)", opt=True)
        bank, _, lay = c.bank()
        b.add(f"4. 임금: 월 {r.randint(206, 450) * 10000:,}원, 매월 {r.randint(1, 28)}일 근로자 명의 예금통장에 입금 ({bank} ",
              c.account(lay), ")")
        b.add("5. 기타: 이 계약에 정함이 없는 사항은 근로기준법령에 의함", opt=True)
        b.add(c.date("kor"))
        b.add(f"(사업주) 사업체명: {name}  (전화: ", c.phone("land"), ")")
        b.add("         주소: ", c.address()[0])
        b.add("         사업자등록번호: ", c.business_reg(r.choice(("corp", "individual"))))
        b.add("         대표자: ", c.person(), "  (서명)")
        b.add("(근로자) 주소: ", c.address(allow_break=True)[0])
        b.add("         연락처: ", c.phone("mobile"))
        if foreign:
            b.add("         외국인등록번호: ", c.rrn("FRN"), f"  국적: {r.choice(_NATIONS)}")
            if r.random() < 0.5:
                b.add("         여권번호: ", c.passport())
        else:
            b.add("         ", *c.dob_field())
        b.add("         성명: ", c.person(), "  (서명)")
    else:
        n1, k1 = c.company()
        n2, k2 = c.company()
        b.add(r.choice(("용역 계약서", "물품 공급 계약서", "업무 위탁 계약서")))
        b.add(f"{n1}(이하 \"갑\")과 {n2}(이하 \"을\")은 다음과 같이 계약을 체결한다.")
        amt = r.randint(100, 90000) * 10000
        b.add(f"제1조(계약금액) 금 {amt:,}원(부가가치세 별도)", opt=True)
        bank, _, lay = c.bank()
        b.add(f"제2조(대금 지급) 갑은 검수 완료 후 30일 이내에 을의 {bank} 계좌 ", c.account(lay), "로 지급한다.")
        b.add(f"제3조(개인정보 보호) 을은 {r.choice(_LAWS)}에 따른 의무를 준수한다.", opt=True)
        b.add(c.date("kor"))
        for tag, n, kk in (("갑", n1, k1), ("을", n2, k2)):
            head = "대표이사" if kk == "주식회사" else "대표자" if kk == "유한회사" else "이사장"
            b.add(f"({tag}) 상호: {n}  {head} ", c.person(), r.choice((" (인)", "  (직인)", "")))
            b.add("     본점: " if kk.endswith("회사") else "     주된 사무소: ", *c.address_with_postal())
            row: list[_Seg] = ["     사업자등록번호: ", c.business_reg("corp" if kk.endswith("회사") else "nonprofit")]
            if r.random() < 0.7:
                row += [r.choice(("  법인등록번호: ", "  등록번호(법인): ", "  법인등록번호 ")), c.corp_reg(kk)]
            b.add(*row)
            if r.random() < 0.5:
                b.add("     담당: ", *c.named("company"), " (", c.phone(), ", ", c.email(domain=c.domain()), ")", opt=True)
            if r.random() < 0.35:
                b.add("     팩스: ", c.fax(), opt=True)
    return b


def _g_court(c: _Ctx) -> _Lines:
    case, name = c.case_no()  # the case decides the rest: criminal (고단, 노, ...), administrative (구합, 구단), civil
    r = c.r
    b = _Lines()
    criminal = case[4] in "고노"
    admin = "구" in case[4:6]
    b.add(r.choice(_COURTS))
    b.add(r.choice(("판 결", "판결")))
    b.add(f"사 건  {case} {name}")
    if criminal:
        b.add("피 고 인  ", c.person(), " (", c.rrn(mode=r.choice(("masked", "masked", "check")), adult=True), "), "
              + r.choice(("회사원", "무직", "자영업", "운전기사")))
        b.add("주거  ", c.address()[0])
        if r.random() < 0.5:
            b.add("등록기준지  ", c.address(form="jibun")[0], opt=True)
        b.add("검 사  ", c.person(), "(기소), ", c.person(), "(공판)")
        b.add("변 호 인  변호사 ", c.person(), r.choice(("(국선)", "")))
    else:
        b.add("원 고  ", c.person(), *(("(", c.rrn(mode="masked", adult=True), ")") if r.random() < 0.3 else ()))
        b.add("      ", c.address(allow_break=True)[0])
        b.add("      소송대리인 변호사 ", c.person())
        if admin:
            b.add(f"피 고  {r.choice(('서울특별시경찰청장', '경기도남부경찰청장', '부산광역시경찰청장'))}")
        elif r.random() < 0.5:
            nm, kk = c.company()
            b.add(f"피 고  {nm}")
            b.add("      ", c.address()[0])
            b.add("      대표이사 ", c.person())
        else:
            b.add("피 고  ", c.person())
            b.add("      ", c.address()[0])
    b.add(f"변 론 종 결  {c.date('dot')}", opt=True)
    b.add(f"판 결 선 고  {c.date('dot')}")
    b.add("주 문")
    if criminal:
        b.add(f"피고인을 {r.choice(('징역 1년', '징역 6월', '벌금 5,000,000원', '벌금 3,000,000원'))}에 처한다.")
    else:
        b.add(f"1. 피고는 원고에게 {r.randint(100, 90000) * 10000:,}원 및 이에 대하여 {c.date('dot')}부터 다 갚는 날까지 "
              f"연 {r.choice((5, 12))}%의 비율로 계산한 돈을 지급하라.")
        b.add("2. 소송비용은 피고가 부담한다.", opt=True)
    b.add("이 유")
    facts: list[tuple[_Seg, ...]] = []
    if admin or r.random() < 0.25:
        facts.append((f"원고는 {c.date('dot')} 제1종 보통 운전면허(면허번호: ", c.driver_license(), ")를 취득한 사람이다."))
    if r.random() < 0.4:
        facts.append((f"피고{'인' if criminal else ''}은 {c.date('kor')} {r.randint(1, 23)}:{r.randint(0, 59):02d}경 ",
                      c.vehicle(), " 승용차를 운전하여 ", c.address(form="road")[0], " 앞 도로를 진행하던 중 피해자 ",
                      c.person(), f"({r.choice(('남', '여'))}, ", _S("AGE", f"{r.randint(19, 85)}세"), ")를 충격하였다."))
    if r.random() < 0.3:
        bank, _, lay = c.bank()
        facts.append(("피해자로부터 ", c.person(), f" 명의의 {bank} 계좌(", c.account(lay), f")로 "
                      f"{r.randint(100, 9000) * 10000:,}원을 송금받았다."))
    if r.random() < 0.18:
        facts.append((f"{c.date('kor')} IP 주소 ", c.ip(), "에서 인터넷 게시판에 글을 게시하였다."))
    if r.random() < 0.12:
        facts.append(("피해자는 이 사고로 치료를 받았다(건강보험증번호 ", c.medical_insurance(), ")."))
    if r.random() < 0.12:
        facts.append(("피고 회사(법인등록번호 ", c.corp_reg(), ")는 위 사업을 영위하는 법인이다."))
    if not facts:
        facts.append(("원고와 피고는 ", c.address()[0], " 소재 건물에 관하여 임대차계약을 체결하였다."))
    for i, f in enumerate(facts[:4]):
        b.add(f"  {'가나다라'[i]}. ", *f)
    b.add(f"  [인정 근거] 다툼 없는 사실, 갑 제1호증 내지 제{r.randint(2, 9)}호증의 각 기재, 변론 전체의 취지", opt=True)
    b.add(f"  위 인정 사실에 의하면 {r.choice(_LAWS)}에 따라 책임이 인정된다.", opt=True)
    if r.random() < 0.5:
        b.add("재판장 판사 ", c.person(0.0), "   판사 ", c.person(0.0), "   판사 ", c.person(0.0))
    else:
        b.add("판사  ", c.person(0.0))
    return b


def _g_chat(c: _Ctx) -> _Lines:
    r = c.r
    b = _Lines()
    people = [c.person(0.02) for _ in range(r.randint(2, 3))]
    style = r.random()
    h, m = r.randint(1, 11), r.randint(0, 50)
    ampm = r.choice(("오전", "오후"))
    day = c.date("dot")

    def who(i: int) -> tuple[_Seg, ...]:
        nonlocal m
        m = min(59, m + r.randint(0, 3))
        p = people[i % len(people)]
        if style < 0.45:
            return ("[", p, f"] [{ampm} {h}:{m:02d}] ")
        if style < 0.75:
            return (f"{day} {ampm} {h}:{m:02d}, ", p, " : ")
        return (p, ": ")

    if style >= 0.45 and r.random() < 0.5:
        b.add(f"--------------- {c.date('kor')} ---------------", opt=True)
    msgs: list[tuple[_Seg, ...]] = []
    phone = c.phone("mobile", casual=True)
    msgs.append(r.choice((("내 번호 ", phone, " 저장해"), ("번호 바뀜 ", phone), (phone, " 이걸로 연락줘"))))
    if r.random() < 0.55:
        a = c.address(casual=True)[0]
        msgs.append(r.choice((("주소 보내줄게 ", a), (a, " 여기로 와"), ("택배 ", a, " 로 보내주세요"))))
    if r.random() < 0.4:
        _, short, lay = c.bank()
        msgs.append(r.choice(((f"{short} ", c.account(lay, casual=True), " ", c.person(), " 앞으로 보내줘"),
                              (f"{short} ", c.account(lay, casual=True), " (예금주 ", c.person(), ")"),
                              ("계좌 ", c.account(lay, casual=True), f" {short} 입금 ㄱㄱ"))))
    if r.random() < 0.3:
        msgs.append(("내 차 ", c.vehicle(), r.choice((" 지하 2층에 있어", " 주차장 B구역", " 흰색이야"))))
    if r.random() < 0.3:
        msgs.append(("메일 ", c.email(domain=r.choice(_MAIL_PROVIDERS)), " 으로 보내줘"))
    if r.random() < 0.2:
        msgs.append(("카드번호 ", c.card(), f" 유효기간 {r.randint(1, 12):02d}/{r.randint(25, 30)}"))
    if r.random() < 0.12:
        msgs.append(("주민번호 ", c.rrn(sep=r.choice(("-", ""))), " 맞지?"))
    if r.random() < 0.25:
        msgs.append(("이거 봐 ", c.url()))
    if r.random() < 0.15:
        msgs.append(("여권번호 ", c.passport(), " 이거 맞아?"))
    if r.random() < 0.12:
        msgs.append(("면허번호 ", c.driver_license(), " 렌트할 때 필요하대"))
    if r.random() < 0.25:
        n = r.randint(19, 60)
        msgs.append(r.choice((("나 ", _S("AGE", f"{n}살"), "임 ㅋㅋ"), ("걔 ", _S("AGE", f"만 {n}세"), "래"))))
    if r.random() < 0.12:
        msgs.append(("서버 IP ", c.ip(), " 로 접속해봐"))
    if r.random() < 0.2:
        msgs.append(("아까 ", c.person(), " ", r.choice(("과장님이", "씨가", "선배가")), " 전화했어"))
    fillers = ["ㅋㅋㅋㅋ", "ㅇㅋ", "알겠어", "몇 시에 봐?", f"{r.randint(1, 11)}시 {r.choice(('반', '정각'))}에 보자",
               "만원만 빌려줘", "회의 3시 30분으로 바뀜", "이번 주 금요일 어때", "김치찌개 먹자", "늦을 듯 ㅠㅠ",
               "정부 지원금 신청했어?", f"택배 송장 {_digits(r, 4)}-{_digits(r, 4)}-{_digits(r, 4)}"]
    r.shuffle(msgs)
    seq: list[tuple[tuple[_Seg, ...], bool]] = [(mm, False) for mm in msgs]
    for _ in range(r.randint(max(1, 3 - len(msgs)), 5)):
        seq.insert(r.randint(0, len(seq)), ((r.choice(fillers),), True))
    for i, (mm, opt) in enumerate(seq):
        b.add(*who(i), *mm, opt=opt)
    return b


_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _g_email(c: _Ctx) -> _Lines:
    r = c.r
    b = _Lines()
    company, _ = c.company()
    dom = c.domain()
    sender = c.person()
    korean = r.random() < 0.4
    f_, t_, cc_, d_, s_ = (("보낸 사람: ", "받는 사람: ", "참조: ", "날짜: ", "제목: ") if korean
                           else ("From: ", "To: ", "Cc: ", "Date: ", "Subject: "))
    b.add(f_, sender, " <", c.email(domain=dom), ">")
    b.add(t_, c.person(), " <", c.email(), ">", *(("; ", c.email()) if r.random() < 0.3 else ()))
    if r.random() < 0.4:
        b.add(cc_, c.email(domain=r.choice((dom, dom, r.choice(_MAIL_PROVIDERS)))), opt=True)
    when = datetime.date(r.randint(2021, 2025), r.randint(1, 12), r.randint(1, 28))
    b.add(f"{d_}{_WEEKDAYS[when.weekday()]}, {when.day} {_MONTHS[when.month - 1]} {when.year} {r.randint(7, 22):02d}:"
          f"{r.randint(0, 59):02d}:{r.randint(0, 59):02d} +0900")
    topic = r.choices(("quote", "travel", "payment", "hire", "system", "insurance"), (25, 15, 15, 15, 18, 12))[0]
    subj = {"quote": "견적서 송부의 건", "travel": "예약 확인 및 탑승객 정보", "payment": "결제 오류 확인 요청",
            "hire": "입사 서류 제출", "system": "접속 차단 안내", "insurance": "보험금 청구 서류"}[topic]
    b.add(f"{s_}[{company}] {subj}")
    if r.random() < 0.45:
        b.add("X-Originating-IP: [", c.ip(), "]")
    b.blank()
    b.add(c.person(), f" {r.choice(_COMPANY_TITLES)}님, 안녕하세요.")
    b.add(f"{company} {r.choice(_CO_DEPTS)} ", sender, "입니다.")
    if topic == "quote":
        bank, _, lay = c.bank()
        b.add("요청하신 견적서를 첨부합니다. 당사 사업자등록번호는 ", c.business_reg(), "입니다.")
        b.add(f"대금은 {bank} ", c.account(lay), f" (예금주 {company})로 입금 부탁드립니다.")
        if r.random() < 0.35:
            b.add("법인등록번호: ", c.corp_reg(), opt=True)
    elif topic == "travel":
        b.add("탑승객 ", c.person(), "님의 여권번호 ", c.passport(), ", ", *c.dob_field(), " 으로 예약되었습니다.")
        if r.random() < 0.5:
            b.add("동반 탑승객 ", c.person(), " / 여권번호 ", c.passport(), opt=True)
    elif topic == "payment":
        b.add("결제하신 카드 ", c.card(), f"로 {r.randint(1, 900) * 1000:,}원이 이중 승인되었습니다.")
        b.add("취소 내역은 ", c.url(domain=dom), " 에서 확인하실 수 있습니다.")
    elif topic == "hire":
        b.add("입사 서류 확인 부탁드립니다. 성명 ", c.person(), ", ", *c.age(), ", 주소 ", c.address()[0])
        b.add("급여 계좌: ", c.bank()[0] + " ", c.account(), " / 비상연락처 ", c.phone("mobile"))
        if r.random() < 0.3:
            b.add("주민등록번호 ", c.rrn(mode=r.choice(("check", "masked")), adult=True), " (입사 후 4대보험 신고용)",
                  opt=True)
    elif topic == "system":
        b.add(f"{c.date()} {r.randint(0, 23):02d}:{r.randint(0, 59):02d} ", c.ip(), "에서 비정상 로그인 시도가 "
              f"{r.randint(3, 50)}회 감지되어 계정이 잠겼습니다.")
        b.add("잠금 해제는 ", c.url(domain=dom), " 에서 진행해 주세요.")
    else:
        b.add("피보험자 ", c.person(), "님(건강보험증 번호 ", c.medical_insurance(), ")의 진료비 영수증을 보내 드립니다.")
        if r.random() < 0.4:
            b.add("보험금은 ", c.bank()[0] + " ", c.account(), "로 지급됩니다.", opt=True)
    b.add(c.negative(), opt=True)
    b.add("감사합니다.")
    b.blank()
    b.add(sender, f" {r.choice(_COMPANY_TITLES)} | {company} {r.choice(_CO_DEPTS)}")
    k = r.random()
    row: list[_Seg] = [r.choice(("T. ", "Tel. ", "전화 ")), c.phone("land")]
    if k < 0.6:
        row += [r.choice(("  F. ", " | Fax. ", "  팩스 ")), c.fax()]
    if r.random() < 0.6:
        row += [r.choice(("  M. ", " | Mobile. ", "  휴대폰 ")), c.phone("mobile")]
    b.add(*row)
    b.add("E. ", c.email(domain=dom, role=r.random() < 0.15), opt=True)
    if r.random() < 0.7:
        b.add(*c.address_with_postal())
    if r.random() < 0.5:
        b.add(c.url(domain=dom), opt=True)
    return b


def _g_html(c: _Ctx) -> _Lines:
    r = c.r
    b = _Lines()
    kind = r.choices(("card", "roster", "log", "company"), (35, 35, 12, 18))[0]
    title = {"card": "인적사항", "roster": "참가자 명단", "log": "개인정보 접속 기록", "company": "업체 현황"}[kind]
    b.add(f"<h3>{title}</h3>")
    b.add(r.choice(('<table border="1">', '<table class="tbl_info">', '<table style="width:100%">')))
    if kind == "card":
        fields_: list[tuple[str, tuple[_Seg, ...]]] = [("성명", (c.person(),))]
        foreign = r.random() < 0.4
        if foreign:
            fields_.append(("외국인등록번호", (c.rrn("FRN"),)))
            fields_.append(("여권번호", (c.passport(),)))
        else:
            fields_.append(("주민등록번호", (c.rrn(),)))
        if r.random() < 0.5:
            fields_.append(("생년월일", (c.dob(r.choice(("dot0", "kor", "iso"))),)))
        if r.random() < 0.35:
            fields_.append(("나이", (_S("AGE", f"{r.randint(19, 80)}세") if r.random() < 0.6
                                     else _S("AGE", f"만 {r.randint(19, 80)}세"),)))
        fields_.append(("주소", (c.address()[0],)))
        fields_.append(("휴대전화", (c.phone("mobile"),)))
        if r.random() < 0.5:
            fields_.append(("이메일", (c.email(),)))
        if r.random() < 0.4:
            fields_.append(("운전면허번호", (c.driver_license(),)))
        if r.random() < 0.4:
            fields_.append(("건강보험증번호", (c.medical_insurance(),)))
        if r.random() < 0.3:
            fields_.append(("차량번호", (c.vehicle(),)))
        if r.random() < 0.3:
            bank, _, lay = c.bank()
            fields_.append(("계좌번호", (bank + " ", c.account(lay))))
        if r.random() < 0.2:
            fields_.append(("카드번호", (c.card(),)))
        if r.random() < 0.2:
            fields_.append(("팩스", (c.fax(),)))
        i = 0
        while i < len(fields_):
            pair = fields_[i:i + 2]
            if pair[0][0] == "주소" or len(pair) == 1:
                pair = pair[:1]
                b.add("<tr><th>", pair[0][0], '</th><td colspan="3">', *pair[0][1], "</td></tr>")
            else:
                b.add("<tr><th>", pair[0][0], "</th>", *_td(*pair[0][1]), "<th>", pair[1][0], "</th>",
                      *_td(*pair[1][1]), "</tr>")
            i += len(pair)
    elif kind == "roster":
        extra = r.choice(("차량번호", "이메일", "주소", "운전면허번호", "여권번호", "외국인등록번호", "건강보험증번호",
                          "계좌번호", "나이", "카드번호"))
        second = r.choice(("생년월일", "연락처"))
        b.add(f"<tr><th>번호</th><th>성명</th><th>{second}</th><th>{extra}</th><th>비고</th></tr>")
        for i in range(r.randint(3, 8)):
            sv: _S = c.dob(r.choice(("dot0", "iso", "six"))) if second == "생년월일" else c.phone("mobile")
            ev: tuple[_Seg, ...] = {
                "차량번호": lambda: (c.vehicle(),), "이메일": lambda: (c.email(),), "주소": lambda: (c.address()[0],),
                "운전면허번호": lambda: (c.driver_license(),), "여권번호": lambda: (c.passport(),),
                "외국인등록번호": lambda: (c.rrn("FRN"),), "건강보험증번호": lambda: (c.medical_insurance(),),
                "계좌번호": lambda: (c.account(),), "카드번호": lambda: (c.card(),),
                "나이": lambda: (_S("AGE", f"{r.randint(19, 80)}세"),),
            }[extra]()
            note = r.choice(("&nbsp;", "참석", "불참", f"{r.randint(1, 30)}조", "대리 참석", ""))
            b.add("<tr>", *_td(str(i + 1)), *_td(c.person()), *_td(sv), *_td(*ev), *_td(note), "</tr>")
    elif kind == "log":
        b.add("<tr><th>일시</th><th>접속 IP</th><th>취급자</th><th>처리 내용</th></tr>")
        for _ in range(r.randint(3, 8)):
            b.add("<tr>", *_td(f"{c.date('iso')} {r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}"),
                  *_td(c.ip()), *_td(c.person()),
                  *_td(r.choice(("개인정보 조회", "엑셀 다운로드", "로그인 성공", "로그인 실패", "출력"))), "</tr>")
    else:
        name, kk = c.company()
        b.add(f"<tr><th>상호</th><td>{name}</td><th>대표자</th>", *_td(c.person()), "</tr>")
        b.add("<tr><th>사업자등록번호</th>", *_td(c.business_reg()), f"<th>{r.choice(('법인등록번호', '등록번호(법인)'))}</th>",
              *_td(c.corp_reg(kk)), "</tr>")
        b.add('<tr><th>본점 소재지</th><td colspan="3">', *c.address_with_postal(), "</td></tr>")
        b.add("<tr><th>대표전화</th>", *_td(c.phone(r.choice(("land", "rep")))), "<th>팩스</th>", *_td(c.fax()), "</tr>")
        b.add("<tr><th>홈페이지</th>", *_td(c.url(domain=c.domain())), "<th>담당자</th>",
              *_td(*c.named("company")), "</tr>")
        if r.random() < 0.5:
            b.add("<tr><th>이메일</th>", *_td(c.email()), f"<th>설립일</th><td>{c.date('dot0', r.randint(1980, 2020))}</td></tr>")
    b.add("</table>")
    if r.random() < 0.6:
        b.add(f"<p>{c.negative()}</p>", opt=True)
    return b


_FORMS = ("운전경력증명서 발급 신청서", "건강보험 피부양자 자격취득 신고서", "외국인등록 사실증명 발급 신청서",
          "여권 발급 신청서", "자동차 이전등록 신청서", "환급금 지급 신청서", "주민등록표 등·초본 교부 신청서")


def _g_form(c: _Ctx) -> _Lines:
    r = c.r
    b = _Lines()
    form = r.choice(_FORMS)
    b.add(form)
    b.add(f"접수번호 {r.randint(2019, 2024)}-{_digits(r, 6)}   접수일 {c.date('dot')}   처리기간 {r.choice(('즉시', '3일', '7일'))}",
          opt=True)
    lab_name = r.choice(("성    명 : ", "성 명: ", "이  름 : ", "이  름  ", "성명: ", "성    명  "))
    lab_addr = r.choice(("주    소 : ", "주 소: ", "주소: ", "주    소  "))
    applicant = c.person()
    b.add(lab_name, applicant)
    foreign = "외국인" in form
    if foreign:
        b.add("외국인등록번호 : ", c.rrn("FRN"), f"   국적 : {r.choice(_NATIONS)}")
        b.add("여권번호 : ", c.passport())
    elif r.random() < 0.6:
        b.add("주민등록번호 : ", c.rrn(adult=r.random() < 0.8))
    else:
        b.add(*c.dob_field())
    if r.random() < 0.3:
        b.add(r.choice(("나    이 : ", "")), *c.age(), opt=True)
    b.add(lab_addr, *c.address_with_postal(allow_break=True))
    row: list[_Seg] = ["전화번호 : ", c.phone(r.choice(("land", "mobile")))]
    if r.random() < 0.5:
        row += ["  (휴대전화 : ", c.phone("mobile"), ")"]
    b.add(*row)
    if r.random() < 0.45:
        b.add("전자우편 : ", c.email())
    if "운전" in form or r.random() < 0.15:
        b.add("운전면허번호 : ", c.driver_license())
    if "건강보험" in form or r.random() < 0.2:
        lab = r.choice(("건강보험증번호 : ", "건강보험 증번호 : ", "보험증 번호: ", "피보험자 증번호 : "))
        b.add(lab, c.medical_insurance())
        if "피부양자" in form:
            b.add("피부양자 성명 : ", c.person(), "  관계 : " + r.choice(("배우자", "자녀", "부모")), "  주민등록번호 : ", c.rrn())
    if "여권" in form:
        b.add("기존 여권번호 : ", c.passport(), f"   만료일 : {c.date('dot0')}")
    if "자동차" in form or r.random() < 0.15:
        b.add("차량번호 : ", c.vehicle(), f"   차대번호 : KMH{r.choice('CDEJ')}{_digits(r, 2)}{r.choice('ABCD')}{_digits(r, 10)}")
        if "자동차" in form:
            b.add("양수인 성명 : ", c.person(), "   주민등록번호 : ", c.rrn())
    if "환급" in form or r.random() < 0.25:
        bank, _, lay = c.bank()
        b.add(f"환급 계좌 : {bank} ", c.account(lay), "   예금주 : ", c.person())
    if r.random() < 0.25:
        b.add("자동이체 카드 : ", c.card(), opt=True)
    b.add(f"{r.choice(_LAWS)}에 따라 위와 같이 신청합니다.")
    b.blank()
    b.add(c.date("dot"))
    b.blank()
    signer = r.choice(("신청인  ", "신청인  ", "신청인 ", "신고인  ", "신청인(대리인)  "))
    b.add(signer, c.person() if "대리인" in signer else applicant, r.choice(("  (서명 또는 인)", " (서명 또는 인)", "  (인)")))
    b.add(f"{_institution(c)[1]} 귀하")
    return b


_GENRE_FUNCS = {"official_letter": _g_official, "complaint_reply": _g_complaint, "contract": _g_contract,
                "court_ruling": _g_court, "chat": _g_chat, "email": _g_email, "html_table": _g_html,
                "application_form": _g_form}
_GENRE_WEIGHTS = (13, 13, 14, 11, 12, 12, 13, 12)


# ---------------------------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------------------------


def _generate(n: int, split: str, seed: int = 0) -> Iterator[tuple[dict, list[_S]]]:
    """Records with their spans' generator-side details (checksum flags, open-class values used)."""
    for i, genre, _, (text, spans, metas) in common.documents(
            n, split, seed, stream="klue-pipeline/pii-evalgen", pools=pools, genres=_GENRE_FUNCS,
            weights=_GENRE_WEIGHTS, context=_Ctx):
        yield {"id": f"{split}-{seed}-{i:05d}", "genre": genre, "split": split, "text": text, "spans": spans}, metas


def generate(n: int, split: str, seed: int = 0) -> Iterator[dict]:
    """`n` documents of `split` ("dev" or "heldout"), deterministic in (split, seed); document i does not
    depend on n, so a shorter run is a prefix of a longer one."""
    for rec, _ in _generate(n, split, seed):
        yield rec


write_split = common.split_writer(generate)
_label_counts = partial(common.label_counts, labels=LABELS)
